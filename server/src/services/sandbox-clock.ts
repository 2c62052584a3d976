import type { Db, Sql } from '../db/pool.js';
import { firstRow } from '../lib/defined.js';
import { invalidField } from './errors.js';

/**
 * The sandbox clock (LOYALTY_SANDBOX, migration 0037): the server's now is the database's now()
 * plus `sandbox_clock.offset_seconds`, which only moves forward; SQL reads it as loyalty_now().
 * Real time keeps running from the point it was moved to.
 */
export type ClockState = { now: string; offset_seconds: number; real_now: string };

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `30s`, `15m`, `2h`, `7d` (a positive whole number and one unit) in seconds; null when it is not one. */
export function parseDuration(value: string): number | null {
  const m = /^([1-9]\d{0,8})([smhd])$/.exec(value.trim());
  return m ? Number(m[1]) * (UNITS[m[2] as string] as number) : null;
}

export async function readClock(db: Db): Promise<ClockState & { resets: number }> {
  const rows = await db<{ now: Date; real_now: Date; offset_seconds: number; resets: string }[]>`
    SELECT loyalty_now() AS now, now() AS real_now, offset_seconds, resets::text FROM sandbox_clock WHERE one`;
  const row = firstRow(rows, 'the sandbox clock');
  return {
    now: row.now.toISOString(),
    offset_seconds: row.offset_seconds,
    real_now: row.real_now.toISOString(),
    resets: Number(row.resets),
  };
}

/**
 * Moves the clock forward by `advance` (a duration) or to `set` (a time not before the sandbox's
 * now: going back would make leases, expiries and the retry schedule run backwards; a 422 names
 * the field). Returns the new state.
 */
export async function moveClock(db: Db, input: { advance?: string; set?: string }): Promise<ClockState> {
  if ((input.advance === undefined) === (input.set === undefined))
    throw invalidField('advance', 'Send exactly one of advance and set.');
  if (input.advance !== undefined) {
    const seconds = parseDuration(input.advance);
    if (seconds === null)
      throw invalidField('advance', 'The advance field must be a positive duration such as 30s, 15m, 2h or 7d.');
    await db`UPDATE sandbox_clock SET offset_seconds = offset_seconds + ${seconds} WHERE one`;
  } else {
    const target = new Date(input.set as string);
    if (Number.isNaN(target.getTime())) throw invalidField('set', 'The set field must be an RFC 3339 date-time.');
    const moved = await db`
      UPDATE sandbox_clock SET offset_seconds = extract(epoch FROM ${target}::timestamptz - now())::float8
      WHERE one AND ${target}::timestamptz >= loyalty_now()`;
    if (moved.count === 0)
      throw invalidField(
        'set',
        'The set field must not be before the sandbox clock (it only moves forward; reset to go back).',
      );
  }
  const { resets: _resets, ...state } = await readClock(db);
  return state;
}

/**
 * What a process keeps of the clock for the checks it makes without a query (the token cache):
 * the offset and the count of resets, read again at most once a second (another API process may
 * have moved them) and at once when this process moved them.
 */
export type ProcessClock = {
  /** Milliseconds since the epoch on the sandbox clock. */
  nowMs(): number;
  /** Changes when the data was reset: caches of it are void. */
  generation(): number;
  refresh(): Promise<void>;
};

export function createProcessClock(db: Db, { refreshMs = 1000 } = {}): ProcessClock {
  let offsetMs = 0;
  let resets = 0;
  let readAt = 0;
  let reading: Promise<void> | undefined;
  const refresh = () => {
    reading ??= readClock(db)
      .then(
        (state) => {
          offsetMs = state.offset_seconds * 1000;
          resets = state.resets;
          readAt = Date.now();
        },
        () => {
          readAt = Date.now(); // the database is away: try again in a second
        },
      )
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const maybeRefresh = () => {
    if (Date.now() - readAt >= refreshMs) void refresh();
  };
  return {
    nowMs: () => {
      maybeRefresh();
      return Date.now() + offsetMs;
    },
    generation: () => {
      maybeRefresh();
      return resets;
    },
    refresh,
  };
}

/** loyalty_now() on the sandbox clock: an offset read per call (about 1.5 µs a row where it is evaluated per row). */
const SANDBOX_NOW = `SELECT now() + make_interval(secs => coalesce((SELECT offset_seconds FROM sandbox_clock WHERE one), 0))`;
/** loyalty_now() outside sandbox mode: now() itself, which PostgreSQL inlines (no cost at all). */
const REAL_NOW = 'SELECT now()';

/**
 * Defines loyalty_now() for this database as the process's configuration says (migration 0037
 * creates the sandbox form): outside sandbox mode it is plain now(), so a production database
 * pays nothing for the sandbox clock. Rewritten only when it differs, under a lock (several
 * processes start at once). Every process of one deployment has the same LOYALTY_SANDBOX.
 */
export async function defineLoyaltyNow(sql: Sql, sandbox: boolean): Promise<void> {
  const body = sandbox ? SANDBOX_NOW : REAL_NOW;
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('loyalty_now'))`;
    const [current] = await tx<{ src: string }[]>`SELECT prosrc AS src FROM pg_proc WHERE proname = 'loyalty_now'`;
    if (current?.src.trim() === body) return;
    await tx.unsafe(
      `CREATE OR REPLACE FUNCTION loyalty_now() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$ ${body} $$`,
    );
  });
}
