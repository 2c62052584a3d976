import type { Db, Sql } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import { invalidField } from '../platform/errors.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

/**
 * The sandbox clock of an organization (LOYALTY_SANDBOX, migration 0040): its now is the
 * database's now() plus `sandbox_clocks.offset_seconds` of the organization (0 without a row),
 * which only moves forward; SQL reads it as loyalty_now(org). Real time keeps running from the
 * point it was moved to. Another organization's clock never moves with it.
 */
export type ClockState = { organization_id: string; now: string; offset_seconds: number; real_now: string };

/** How far ahead of real time a clock may run: 10 years of 365.25 days (the CHECK of migration 0040). */
export const CLOCK_CAP_SECONDS = 315_576_000;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `30s`, `15m`, `2h`, `7d` (a positive whole number and one unit) in seconds; null when it is not one. */
export function parseDuration(value: string): number | null {
  const m = /^([1-9]\d{0,8})([smhd])$/.exec(value.trim());
  return m ? Number(m[1]) * (UNITS[m[2] as string] as number) : null;
}

/**
 * The organization a clock request is about: the `organization_id` sent, or the token's only
 * organization. A 422 naming organization_id when the token has several and names none, or names
 * one it cannot reach.
 */
export function clockOrganization(scope: OrganizationScope, organizationId: string | undefined): string {
  if (organizationId !== undefined) {
    if (!scope.organizationIds.includes(organizationId))
      throw invalidField('organization_id', 'The organization_id field must be one of the organizations of the token.');
    return organizationId;
  }
  const [only, ...others] = scope.organizationIds;
  if (only === undefined || others.length)
    throw invalidField(
      'organization_id',
      'The organization_id field is required when the token has access to several organizations.',
    );
  return only;
}

export async function readClock(db: Db, organizationId: string): Promise<ClockState> {
  const rows = await db<{ now: Date; real_now: Date; offset_seconds: number }[]>`
    SELECT loyalty_now(${organizationId}::text) AS now, now() AS real_now,
           coalesce((SELECT offset_seconds FROM sandbox_clocks WHERE organization_id = ${organizationId}), 0) AS offset_seconds`;
  const row = firstRow(rows, 'the sandbox clock');
  return {
    organization_id: organizationId,
    now: row.now.toISOString(),
    offset_seconds: row.offset_seconds,
    real_now: row.real_now.toISOString(),
  };
}

const CAP_MESSAGE = `at most 10 years (${CLOCK_CAP_SECONDS} s) ahead of real time`;

/**
 * Moves the organization's clock forward by `advance` (a duration) or to `set` (a time not before
 * its now: going back would make leases, expiries and the retry schedule run backwards). The cap
 * is a condition of the one statement that moves the clock, so a move beyond it changes nothing
 * and is a 422 naming the field; nothing out of range is ever stored. Returns the new state.
 */
export async function moveClock(
  db: Db,
  organizationId: string,
  input: { advance?: string; set?: string },
): Promise<ClockState> {
  if ((input.advance === undefined) === (input.set === undefined))
    throw invalidField('advance', 'Send exactly one of advance and set.');
  if (input.advance !== undefined) {
    const seconds = parseDuration(input.advance);
    if (seconds === null)
      throw invalidField('advance', 'The advance field must be a positive duration such as 30s, 15m, 2h or 7d.');
    const moved = await db`
      INSERT INTO sandbox_clocks AS c (organization_id, offset_seconds)
      SELECT ${organizationId}, ${seconds}::float8 WHERE ${seconds}::float8 <= ${CLOCK_CAP_SECONDS}
      ON CONFLICT (organization_id) DO UPDATE SET offset_seconds = c.offset_seconds + excluded.offset_seconds
      WHERE c.offset_seconds + excluded.offset_seconds <= ${CLOCK_CAP_SECONDS}`;
    if (moved.count === 0)
      throw invalidField('advance', `The advance field would put the clock beyond ${CAP_MESSAGE}.`);
  } else {
    const target = Date.parse(input.set as string);
    if (Number.isNaN(target)) throw invalidField('set', 'The set field must be an RFC 3339 date-time.');
    // Seconds since the epoch, not a timestamptz: no target can overflow PostgreSQL's types.
    const moved = await db<{ refused: 'before' | 'beyond' | null }[]>`
      WITH wanted AS (SELECT ${target / 1000}::float8 - extract(epoch FROM now())::float8 AS o),
      moved AS (
        INSERT INTO sandbox_clocks AS c (organization_id, offset_seconds)
        SELECT ${organizationId}, o FROM wanted WHERE o >= 0 AND o <= ${CLOCK_CAP_SECONDS}
        ON CONFLICT (organization_id) DO UPDATE SET offset_seconds = excluded.offset_seconds
        WHERE excluded.offset_seconds >= c.offset_seconds
        RETURNING 1)
      SELECT CASE WHEN EXISTS (SELECT 1 FROM moved) THEN NULL
                  WHEN wanted.o > ${CLOCK_CAP_SECONDS} THEN 'beyond' ELSE 'before' END AS refused
      FROM wanted`;
    const refused = firstRow(moved, 'the move of the clock').refused;
    if (refused === 'beyond') throw invalidField('set', `The set field must be ${CAP_MESSAGE}.`);
    if (refused === 'before')
      throw invalidField(
        'set',
        'The set field must not be before the sandbox clock (it only moves forward; reset to go back).',
      );
  }
  return readClock(db, organizationId);
}

/**
 * What a process keeps of the clocks for the checks it makes without a query (the token cache):
 * every organization's offset and the count of resets, read again at most once a second (another
 * API process may have moved them) and at once when this process moved them.
 */
export type ProcessClock = {
  /** Milliseconds since the epoch on the latest clock of these organizations (a token's). */
  nowMs(organizationIds: readonly string[]): number;
  /** Changes when the data was reset: caches of it are void. */
  generation(): number;
  refresh(): Promise<void>;
};

export function createProcessClock(db: Db, { refreshMs = 1000 } = {}): ProcessClock {
  let offsetsMs = new Map<string, number>();
  let resets = 0;
  let readAt = 0;
  let reading: Promise<void> | undefined;
  const refresh = () => {
    reading ??= db<{ resets: string | null; offsets: Record<string, number> }[]>`
      SELECT (SELECT resets::text FROM sandbox_clock WHERE one) AS resets,
             coalesce((SELECT json_object_agg(organization_id, offset_seconds) FROM sandbox_clocks WHERE offset_seconds > 0), '{}') AS offsets`
      .then(
        ([row]) => {
          offsetsMs = new Map(Object.entries(row?.offsets ?? {}).map(([org, s]) => [org, s * 1000]));
          resets = Number(row?.resets ?? 0);
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
    nowMs: (organizationIds) => {
      maybeRefresh();
      let ahead = 0;
      for (const org of organizationIds) ahead = Math.max(ahead, offsetsMs.get(org) ?? 0);
      return Date.now() + ahead;
    },
    generation: () => {
      maybeRefresh();
      return resets;
    },
    refresh,
  };
}

/** The functions that follow an organization's clock (migration 0040): their sandbox and real-time bodies. */
const CLOCK_FUNCTIONS = [
  {
    signature: 'loyalty_now(org text)',
    sandbox: `SELECT now() + make_interval(secs => coalesce((SELECT offset_seconds FROM sandbox_clocks WHERE organization_id = org), 0))`,
  },
  {
    signature: 'loyalty_now_latest(orgs text[])',
    sandbox: `SELECT now() + make_interval(secs => coalesce((SELECT max(offset_seconds) FROM sandbox_clocks WHERE organization_id = ANY(orgs)), 0))`,
  },
];
/** Outside sandbox mode: now() itself, which PostgreSQL inlines (no cost at all). */
const REAL_NOW = 'SELECT now()';

/**
 * Defines loyalty_now(org) and loyalty_now_latest(orgs) for this database as the process's
 * configuration says (migration 0040 creates the sandbox forms): outside sandbox mode they are
 * plain now(), so a production database pays nothing for the sandbox clocks. loyalty_now()
 * without an argument is real time in both modes. Rewritten only when they differ, under a lock
 * (several processes start at once). Every process of one deployment has the same LOYALTY_SANDBOX.
 */
export async function defineLoyaltyNow(sql: Sql, sandbox: boolean): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('loyalty_now'))`;
    const current = await tx<{ signature: string; src: string }[]>`
      SELECT p.proname || '(' || pg_get_function_arguments(p.oid) || ')' AS signature, p.prosrc AS src
      FROM pg_proc p WHERE p.proname IN ('loyalty_now', 'loyalty_now_latest') AND p.pronamespace = current_schema()::regnamespace`;
    for (const f of CLOCK_FUNCTIONS) {
      const body = sandbox ? f.sandbox : REAL_NOW;
      if (current.find((c) => c.signature === f.signature)?.src.trim() === body) continue;
      await tx.unsafe(
        `CREATE OR REPLACE FUNCTION ${f.signature} RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$ ${body} $$`,
      );
    }
  });
}
