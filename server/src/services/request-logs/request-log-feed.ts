import type { Sql } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalidField } from '../platform/errors.js';
import { listenWaiters } from '../platform/listen-waiters.js';
import { REQUEST_LOGS_CHANNEL } from './request-log-buffer.js';

/**
 * GET /request-logs: one organization's request log, newest first and paged backwards by `cursor`,
 * or, with `after`, the rows newer than a cursor, oldest first, with an optional long poll (`wait`)
 * woken by the writer's notification for this organization alone (listen-waiters.ts, as GET /events).
 *
 * Cursors are `<txid>.<id>` (migration 0047): rows are ordered by the writing transaction's id and
 * only rows of transactions below the reader's snapshot xmin are shown, so a batch committed late
 * never lands behind a cursor already handed out (the event feed's rule, event-feed.ts).
 */
export type RequestLogQuery = {
  status?: string;
  method?: string;
  path?: string;
  request_id?: string;
  since?: string;
  cursor?: string;
  after?: string;
  limit?: number;
  waitSeconds?: number;
};

type Position = { txid: string; id: string };
type Row = {
  horizon: string;
  id: string | null;
  txid: string | null;
  created_at: Date | null;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  request_id: string;
  client_id: string | null;
  error_code: string | null;
};

const CURSOR = /^(\d{1,20})\.(\d{1,20})$/;
const MAX_ID = '9223372036854775807';
const encode = (p: Position) => `${p.txid}.${p.id}`;
const compare = (a: Position, b: Position) => {
  const t = BigInt(a.txid) - BigInt(b.txid);
  return t !== 0n ? (t < 0n ? -1 : 1) : Number(BigInt(a.id) - BigInt(b.id));
};

function decode(field: 'cursor' | 'after', value: string): Position {
  const [, txid, id] = CURSOR.exec(value) ?? [];
  // Decimal without leading zeros (PostgreSQL reads xid8 text with a leading 0 as octal), in bigint range.
  if (txid === undefined || id === undefined || BigInt(id) > BigInt(MAX_ID) || BigInt(txid) > BigInt(MAX_ID))
    throw invalidField(field, `The ${field} field is not a cursor of this request log.`);
  return { txid: BigInt(txid).toString(), id: BigInt(id).toString() };
}

/** Checks the combination of parameters the document cannot express; shapes are checked by validation. */
function positionsOf(query: RequestLogQuery) {
  if (query.cursor !== undefined && query.after !== undefined)
    throw invalidField('after', 'The after field cannot be combined with cursor: cursor pages back, after follows.');
  if (query.waitSeconds && query.after === undefined)
    throw invalidField('wait', 'The wait field needs after (the follow_cursor of an earlier response).');
  if (query.since !== undefined && Number.isNaN(Date.parse(query.since)))
    throw invalidField('since', 'The since field must be a valid date-time.');
  return {
    before: query.cursor === undefined ? undefined : decode('cursor', query.cursor),
    after: query.after === undefined ? undefined : decode('after', query.after),
  };
}

export async function listRequestLogs(
  sql: Sql,
  organizationId: string,
  query: RequestLogQuery,
  { signal, pollKey }: { signal?: AbortSignal; pollKey?: string } = {},
) {
  const limit = query.limit ?? 50;
  const { before, after } = positionsOf(query);
  if (!after) {
    const rows = await readRows(sql, organizationId, query, { before }, limit);
    const data = rows.filter((r) => r.id !== null);
    const last = data.at(-1);
    return {
      data: data.map(present),
      next_cursor: data.length === limit && last ? encode(positionOf(last)) : null,
      follow_cursor: horizonCursor(rows),
    };
  }
  const deadline = Date.now() + (query.waitSeconds ?? 0) * 1000;
  const poll = query.waitSeconds ? waiter(sql).open(organizationId, pollKey) : undefined;
  try {
    for (;;) {
      // Subscribe before reading, so a batch committed between the read and the wait still wakes us.
      const woken = poll?.next();
      const rows = await readRows(sql, organizationId, query, { after }, limit);
      const data = rows.filter((r) => r.id !== null);
      const remaining = deadline - Date.now();
      if (data.length || remaining <= 0 || !woken || signal?.aborted) {
        woken?.cancel();
        const last = data.at(-1);
        // A full page goes on from its last row; a shorter one read every visible row after the
        // cursor, so the next read starts at the horizon (filtered-out rows are not read again).
        const horizon = { txid: (BigInt(rows[0]?.horizon ?? '1') - 1n).toString(), id: MAX_ID };
        const next =
          data.length === limit && last
            ? positionOf(last)
            : compare(horizon, after) > 0
              ? horizon
              : last
                ? positionOf(last)
                : after;
        return { data: data.map(present), next_cursor: encode(next), follow_cursor: encode(next) };
      }
      // Woken by a batch of this organization, or every second (a batch committed may still be
      // hidden behind the xmin of a transaction open at the read).
      await woken.wait(poll?.wakes ? Math.min(remaining, 1000) : remaining, signal);
    }
  } finally {
    poll?.close();
  }
}

const positionOf = (row: Row): Position => ({ txid: row.txid ?? '0', id: row.id ?? '0' });

/** The cursor of "everything visible now": every later row lies beyond it. */
const horizonCursor = (rows: Row[]) => encode({ txid: (BigInt(rows[0]?.horizon ?? '1') - 1n).toString(), id: MAX_ID });

/**
 * One statement: the snapshot's horizon (always one row, even when nothing matches) and the
 * matching rows below it, after `after` oldest first or before `before` newest first.
 */
async function readRows(
  sql: Sql,
  organizationId: string,
  query: RequestLogQuery,
  { before, after }: { before?: Position; after?: Position },
  limit: number,
): Promise<Row[]> {
  const method = query.method === undefined ? sql`` : sql`AND l.method = ${query.method}`;
  const status = statusFilter(sql, query.status);
  const path = pathFilter(sql, query.path);
  const requestId = query.request_id === undefined ? sql`` : sql`AND l.request_id = ${query.request_id}`;
  const since = query.since === undefined ? sql`` : sql`AND l.created_at >= ${new Date(query.since)}`;
  const from = before
    ? sql`AND (l.txid, l.id) < (${before.txid}::xid8, ${before.id}::bigint)`
    : after
      ? sql`AND (l.txid, l.id) > (${after.txid}::xid8, ${after.id}::bigint)`
      : sql``;
  const order = after ? sql`ORDER BY l.txid, l.id` : sql`ORDER BY l.txid DESC, l.id DESC`;
  return sql<Row[]>`
    WITH h AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
    SELECT h.xmin::text AS horizon, r.* FROM h LEFT JOIN LATERAL (
      SELECT l.id::text AS id, l.txid::text AS txid, l.created_at, l.method, l.route, l.status,
             l.duration_ms, l.request_id, l.client_id, l.error_code
      FROM request_logs l
      WHERE l.organization_id = ${organizationId} AND l.txid < h.xmin
        ${method} ${status} ${path} ${requestId} ${since} ${from}
      ${order} LIMIT ${limit}) r ON true`;
}

/** `4xx` (a class) or `404` (one code); the document admits only these shapes. */
function statusFilter(sql: Sql, status: string | undefined) {
  if (status === undefined) return sql``;
  const klass = /^([1-5])xx$/.exec(status)?.[1];
  if (klass) return sql`AND l.status BETWEEN ${Number(klass) * 100} AND ${Number(klass) * 100 + 99}`;
  return sql`AND l.status = ${Number(status)}`;
}

/** A route template or its prefix by whole segments: `/members` matches `/members/{uuid}`, not `/membership`. */
function pathFilter(sql: Sql, path: string | undefined) {
  if (path === undefined) return sql``;
  const exact = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const prefix = `${exact.replace(/[\\%_]/g, (c) => `\\${c}`)}${exact.endsWith('/') ? '' : '/'}%`;
  return sql`AND (l.route = ${exact} OR l.route LIKE ${prefix})`;
}

const present = (row: Row) =>
  ({
    id: encode(positionOf(row)),
    created_at: (row.created_at ?? new Date(0)).toISOString(),
    method: row.method,
    route: row.route,
    status: row.status,
    duration_ms: row.duration_ms,
    request_id: row.request_id,
    client_id: row.client_id,
    error_code: row.error_code,
  }) satisfies Schemas['RequestLogEntry'];

/** Long polls of one client woken by writes at once in a process (as GET /events). */
export const OPEN_LOG_POLLS_PER_CLIENT = 10;
const waiter = (sql: Sql) => listenWaiters(sql, REQUEST_LOGS_CHANNEL, OPEN_LOG_POLLS_PER_CLIENT);
