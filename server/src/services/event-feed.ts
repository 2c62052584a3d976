import { EventEmitter } from 'node:events';
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
  { signal }: { signal?: AbortSignal } = {},
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
  const waiter = query.waitSeconds ? feedWaiter(sql) : undefined;
  for (;;) {
    // Subscribe before reading, so an event committed between the read and the wait still wakes us.
    const woken = waiter?.next();
    const { rows, horizon } = await readEvents(sql, organizationId, after, query.types, limit);
    const remaining = deadline - Date.now();
    // Without a waiter no wait was asked for: answer at once.
    if (rows.length || remaining <= 0 || !woken || signal?.aborted) {
      woken?.cancel();
      const last = rows.at(-1);
      const next = last ? encodeCursor(last) : (query.after ?? `${horizon}.${MAX_SEQ}`);
      return { data: rows.map(envelope), next_cursor: next };
    }
    // Woken by a commit, or every second: an event already committed may still be hidden behind
    // the xmin horizon of a transaction that was open at the read.
    await woken.wait(Math.min(remaining, 1000));
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
 * One LISTEN connection per pool, shared by every long poll of the process: a commit that
 * inserted events wakes the waiting requests, which read again (each for its organization).
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

function createFeedWaiter(sql: Sql) {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const listening = sql.listen('loyalty_events', () => emitter.emit('commit')).catch(() => undefined);
  return {
    next() {
      let wake!: () => void;
      const fired = new Promise<void>((resolve) => (wake = resolve));
      emitter.once('commit', wake);
      let timer: NodeJS.Timeout | undefined;
      return {
        cancel: () => emitter.off('commit', wake),
        wait: async (ms: number) => {
          await listening;
          await Promise.race([fired, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
          clearTimeout(timer);
          emitter.off('commit', wake);
        },
      };
    },
  };
}
