import type { Sql } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalidField } from '../platform/errors.js';
import type { EventType } from './events.js';

/**
 * GET /events: the organization's events in the envelope of webhook deliveries.
 *
 * Cursor safety (migration 0022): events are ordered by (txid, seq), the id of the inserting
 * transaction first, and only events of transactions below the reader's snapshot xmin are shown.
 * Every transaction below that horizon has ended and every later one gets a higher id, so no
 * event can ever commit behind a cursor. A plain `seq > after` would lose events: sequence values
 * are taken before commit, so seq 10 can commit after seq 11 was read.
 */

export type FeedQuery = { after?: string; types?: EventType[]; limit?: number; waitSeconds?: number };

type EventRow = {
  id: string;
  type: EventType;
  created_at: Date;
  organization_id: string;
  data: unknown;
  txid: string;
  seq: string;
};

/** `<txid>.<seq>` of the last event seen; opaque to clients. */
const CURSOR = /^(\d{1,20})\.(\d{1,20})$/;
const MAX_SEQ = '9223372036854775807';
const encodeCursor = (row: { txid: string; seq: string }) => `${row.txid}.${row.seq}`;

export async function listEvents(
  sql: Sql,
  organizationId: string,
  query: FeedQuery,
  {
    signal,
    pollKey,
  }: {
    signal?: AbortSignal;
    /** Who polls (the token's client): at most OPEN_POLLS_PER_CLIENT of one key are woken by commits, per process. */
    pollKey?: string;
  } = {},
) {
  const limit = query.limit ?? 50;
  let after: { txid: string; seq: string } | undefined;
  if (query.after !== undefined) {
    const [, txid, seq] = CURSOR.exec(query.after) ?? [];
    // openapi.yaml gives the cursor's shape; the bigint bound of its seq is checked here (a pattern
    // for "at most 9223372036854775807" would be unreadable), so PostgreSQL never sees one out of range.
    if (txid === undefined || seq === undefined || BigInt(seq) > BigInt(MAX_SEQ))
      throw invalidField('after', 'The after field is not a cursor of this feed.');
    // Decimal, without leading zeros: PostgreSQL reads xid8 text with a leading 0 as octal ("0796" fails).
    after = { txid: BigInt(txid).toString(), seq };
  }
  const deadline = Date.now() + (query.waitSeconds ?? 0) * 1000;
  // Past its client's cap a poll is not woken by commits: it reads again when `wait` runs out.
  const poll = query.waitSeconds ? feedWaiter(sql).open(organizationId, pollKey) : undefined;
  try {
    for (;;) {
      // Subscribe before reading, so an event committed between the read and the wait still wakes us.
      const woken = poll?.next();
      const { rows, horizon } = await readEvents(sql, organizationId, after, query.types, limit);
      const remaining = deadline - Date.now();
      // Without a waiter no wait was asked for: answer at once.
      if (rows.length || remaining <= 0 || !woken || signal?.aborted) {
        woken?.cancel();
        const last = rows.at(-1);
        const next = last ? encodeCursor(last) : (query.after ?? `${horizon}.${MAX_SEQ}`);
        return { data: rows.map(envelope), next_cursor: next };
      }
      // Woken by a commit of this organization, or every second: an event already committed may
      // still be hidden behind the xmin horizon of a transaction that was open at the read. Past
      // the cap: only when `wait` runs out (or the client goes).
      await woken.wait(poll?.wakes ? Math.min(remaining, 1000) : remaining, signal);
    }
  } finally {
    poll?.close();
  }
}

async function readEvents(
  sql: Sql,
  organizationId: string,
  after: { txid: string; seq: string } | undefined,
  types: EventType[] | undefined,
  limit: number,
) {
  const typeFilter = types?.length ? sql`AND type = ANY(${types})` : sql``;
  // The horizon: transactions below it have all ended. Read in this statement's snapshot.
  const visible = sql`txid < pg_snapshot_xmin(pg_current_snapshot())`;
  if (after) {
    const rows = await sql<EventRow[]>`
      SELECT id, type, created_at, organization_id, data, txid::text AS txid, seq::text AS seq FROM events
      WHERE organization_id = ${organizationId} AND ${visible} ${typeFilter}
        AND (txid, seq) > (${after.txid}::xid8, ${after.seq}::bigint)
      ORDER BY events.txid, events.seq LIMIT ${limit}`;
    return { rows, horizon: '0' };
  }
  // No cursor: the latest `limit` events, so a new listener starts at "now".
  const rows = await sql<(EventRow & { horizon: string })[]>`
    SELECT * FROM (
      SELECT id, type, created_at, organization_id, data, txid::text AS txid, seq::text AS seq,
             events.txid AS order_txid, events.seq AS order_seq,
             (pg_snapshot_xmin(pg_current_snapshot())::text::numeric - 1)::text AS horizon
      FROM events
      WHERE organization_id = ${organizationId} AND ${visible} ${typeFilter}
      ORDER BY events.txid DESC, events.seq DESC LIMIT ${limit}
    ) latest ORDER BY order_txid, order_seq`;
  if (rows.length) return { rows, horizon: '0' };
  // Nothing yet: the cursor is the horizon itself; every later event lies beyond it.
  const horizons = await sql<
    { horizon: string }[]
  >`SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric - 1)::text AS horizon`;
  return { rows, horizon: firstRow(horizons, 'the snapshot horizon').horizon };
}

// `data` is what recordEvents() stored for the type: the shape of that type's event schema.
const envelope = (e: EventRow) =>
  ({
    id: e.id,
    type: e.type,
    created_at: e.created_at.toISOString(),
    organization_id: e.organization_id,
    data: e.data,
  }) as Schemas['Event'];

/**
 * Long polls of one client woken by commits at once in a process. Past it a poll is only held: it
 * reads again when its `wait` runs out (openapi.yaml, GET /events). Answering it at once instead
 * turned a listener's loop into a busy one (bench sandbox-tenants: 28,587 polls in one phase).
 */
export const OPEN_POLLS_PER_CLIENT = 10;

/**
 * One LISTEN connection per pool, shared by every long poll of the process. The notification
 * names the organization whose events committed (migration 0042), and wakes only that
 * organization's waiting requests, which read again; an empty one (an older trigger) wakes all.
 */
const waiters = new WeakMap<Sql, ReturnType<typeof createFeedWaiter>>();

function feedWaiter(sql: Sql) {
  let waiter = waiters.get(sql);
  if (!waiter) {
    waiter = createFeedWaiter(sql);
    waiters.set(sql, waiter);
  }
  return waiter;
}

/**
 * This process's long polls of an organization: how many wait for its commits now, how many are
 * held past their client's cap (sleeping), and how many commits' notifications woke one so far.
 */
export function longPollStats(sql: Sql) {
  const waiter = feedWaiter(sql);
  return { waiting: waiter.waiting, sleeping: waiter.sleeping, woken: waiter.woken };
}

function createFeedWaiter(sql: Sql) {
  /** The wake functions of the waiting polls, by organization. */
  const waiting = new Map<string, Set<() => void>>();
  const woken = new Map<string, number>();
  const sleeping = new Map<string, number>();
  const openByKey = new Map<string, number>();
  const wakeAll = (organizationId: string, wakes: Set<() => void>) => {
    woken.set(organizationId, (woken.get(organizationId) ?? 0) + wakes.size);
    for (const wake of wakes) wake();
  };
  const listening = sql
    .listen('loyalty_events', (organizationId) => {
      if (!organizationId) for (const [id, wakes] of waiting) wakeAll(id, wakes);
      else {
        const wakes = waiting.get(organizationId);
        if (wakes) wakeAll(organizationId, wakes);
      }
    })
    .catch(() => undefined);

  const wait = (organizationId: string) => {
    let resolveFired!: () => void;
    const fired = new Promise<void>((resolve) => (resolveFired = resolve));
    const wakes = waiting.get(organizationId) ?? new Set<() => void>();
    waiting.set(organizationId, wakes);
    const off = () => {
      wakes.delete(wake);
      if (!wakes.size && waiting.get(organizationId) === wakes) waiting.delete(organizationId);
    };
    const wake = () => {
      off();
      resolveFired();
    };
    wakes.add(wake);
    return {
      cancel: off,
      wait: async (ms: number, signal?: AbortSignal) => {
        await listening;
        await Promise.race([fired, delay(ms, signal)]);
        off();
      },
    };
  };

  /** A poll past its client's cap: woken by time only. */
  const sleep = (organizationId: string) => ({
    cancel: () => {},
    wait: async (ms: number, signal?: AbortSignal) => {
      sleeping.set(organizationId, (sleeping.get(organizationId) ?? 0) + 1);
      try {
        await delay(ms, signal);
      } finally {
        const left = (sleeping.get(organizationId) ?? 1) - 1;
        if (left > 0) sleeping.set(organizationId, left);
        else sleeping.delete(organizationId);
      }
    },
  });

  return {
    waiting: (organizationId: string) => waiting.get(organizationId)?.size ?? 0,
    woken: (organizationId: string) => woken.get(organizationId) ?? 0,
    sleeping: (organizationId: string) => sleeping.get(organizationId) ?? 0,
    /** A poll of `organizationId` by `key`: woken by commits while `key` is within its cap, else by time only. */
    open(organizationId: string, key: string | undefined) {
      let counted = false;
      if (key !== undefined) {
        const open = openByKey.get(key) ?? 0;
        counted = open < OPEN_POLLS_PER_CLIENT;
        if (counted) openByKey.set(key, open + 1);
      }
      const wakes = counted || key === undefined;
      let closed = false;
      return {
        wakes,
        next: () => (wakes ? wait(organizationId) : sleep(organizationId)),
        close: () => {
          if (closed || !counted || key === undefined) return;
          closed = true;
          const left = (openByKey.get(key) ?? 1) - 1;
          if (left > 0) openByKey.set(key, left);
          else openByKey.delete(key);
        },
      };
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
