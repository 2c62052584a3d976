import type { Sql } from '../db/pool.js';
import { firstRow } from '../lib/defined.js';
import type { Schemas } from '../lib/schemas.js';
import { invalidField } from './errors.js';
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
    /** Who polls (the token's client): at most OPEN_POLLS_PER_CLIENT of one key wait at once, per process. */
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
  // A client past its cap of open polls gets no wait: it is answered at once with what there is.
  const poll = query.waitSeconds ? feedWaiter(sql).open(organizationId, pollKey) : undefined;
  try {
    for (;;) {
      // Subscribe before reading, so an event committed between the read and the wait still wakes us.
      const woken = poll?.next();
      const { rows, horizon } = await readEvents(sql, organizationId, after, query.types, limit);
      const remaining = deadline - Date.now();
      // Without a waiter no wait was asked for (or granted): answer at once.
      if (rows.length || remaining <= 0 || !woken || signal?.aborted) {
        woken?.cancel();
        const last = rows.at(-1);
        const next = last ? encodeCursor(last) : (query.after ?? `${horizon}.${MAX_SEQ}`);
        return { data: rows.map(envelope), next_cursor: next };
      }
      // Woken by a commit of this organization, or every second: an event already committed may
      // still be hidden behind the xmin horizon of a transaction that was open at the read.
      await woken.wait(Math.min(remaining, 1000));
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

/** Long polls one client may hold waiting at once in a process; past it a poll answers at once (openapi.yaml, GET /events). */
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

/** How many polls of an organization wait now, and how many commits' notifications woke one so far (this process). */
export function longPollStats(sql: Sql) {
  const waiter = feedWaiter(sql);
  return { waiting: waiter.waiting, woken: waiter.woken };
}

function createFeedWaiter(sql: Sql) {
  /** The wake functions of the waiting polls, by organization. */
  const waiting = new Map<string, Set<() => void>>();
  const woken = new Map<string, number>();
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
    let timer: NodeJS.Timeout | undefined;
    return {
      cancel: off,
      wait: async (ms: number) => {
        await listening;
        await Promise.race([fired, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
        clearTimeout(timer);
        off();
      },
    };
  };

  return {
    waiting: (organizationId: string) => waiting.get(organizationId)?.size ?? 0,
    woken: (organizationId: string) => woken.get(organizationId) ?? 0,
    /** A poll of `organizationId` by `key`: its waits, or undefined when `key` has its cap of open polls. */
    open(organizationId: string, key: string | undefined) {
      if (key !== undefined) {
        const open = openByKey.get(key) ?? 0;
        if (open >= OPEN_POLLS_PER_CLIENT) return undefined;
        openByKey.set(key, open + 1);
      }
      let closed = false;
      return {
        next: () => wait(organizationId),
        close: () => {
          if (closed || key === undefined) return;
          closed = true;
          const left = (openByKey.get(key) ?? 1) - 1;
          if (left > 0) openByKey.set(key, left);
          else openByKey.delete(key);
        },
      };
    },
  };
}
