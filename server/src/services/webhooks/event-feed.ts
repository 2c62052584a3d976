import type { Sql } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalidField } from '../platform/errors.js';
import type { EventType } from './events.js';
import { listenWaiters } from '../platform/listen-waiters.js';

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
const feedWaiter = (sql: Sql) => listenWaiters(sql, 'loyalty_events', OPEN_POLLS_PER_CLIENT);

/**
 * This process's long polls of an organization: how many wait for its commits now, how many are
 * held past their client's cap (sleeping), and how many commits' notifications woke one so far.
 */
export function longPollStats(sql: Sql) {
  const waiter = feedWaiter(sql);
  return { waiting: waiter.waiting, sleeping: waiter.sleeping, woken: waiter.woken };
}
