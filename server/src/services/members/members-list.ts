import { PassThrough, type Readable } from 'node:stream';
import type { Db, Sql } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import { notFound } from '../platform/errors.js';
import { readMemberCount } from './member-counts.js';
import { pageBoundariesOf } from './member-page-boundaries.js';
import { memberItemColumns, seekMembersPage, type RunStatement } from './member-pages.js';
import type { Brand } from '../platform/members-scope.js';
import { readPaging, type Paging } from '../platform/paging.js';

/** Page sizes of POST /members/list (per_page up to 1000: openapi.yaml, docs/decisions.md). */
export const MEMBERS_PER_PAGE_MAX = 1000;
export const MEMBERS_PER_PAGE_DEFAULT = 100;

export type ListPage = Paging;

/** page/per_page arrive as strings (spec) or numbers; both absent means the whole list. */
export function readListPage(input: { page?: unknown; per_page?: unknown }): ListPage | null {
  if (input.page == null && input.per_page == null) return null;
  return readPaging(input, { fallback: MEMBERS_PER_PAGE_DEFAULT, max: MEMBERS_PER_PAGE_MAX }, (value) => {
    if (value == null) return undefined;
    return typeof value === 'number' ? value : /^\s*\d+\s*$/.test(String(value)) ? Number(value) : NaN;
  });
}

/** The envelope of POST /members/list up to (not including) the members array. */
function envelopeHead(listUrl: string, total: number, page: ListPage | null): string {
  const perPage = page?.perPage ?? total;
  const lastPage = page ? Math.max(Math.ceil(total / page.perPage), 1) : 1;
  const data = {
    total,
    last_page: lastPage,
    next_page_url: page && page.page < lastPage ? `${listUrl}?page=${page.page + 1}` : null,
    per_page: perPage,
    last_page_url: `${listUrl}?page=${lastPage}`,
  };
  return `{"message":"Request successful","data":${JSON.stringify(data).slice(0, -1)},"members":[`;
}
const ENVELOPE_TAIL = ']}}';

/**
 * One page of members, as the complete JSON body. `total` is the brand's maintained count (never
 * counted, member-counts.ts) and the page is sought on the link index (member-pages.ts), both in
 * one REPEATABLE READ snapshot: the page and its total agree, and the boundaries the page leaves
 * are remembered under the version of the list they were read in. Any page at any depth costs
 * about one page's rows.
 */
export async function listMembersPage(
  sql: Sql,
  brand: Brand,
  page: ListPage,
  listUrl: string,
  runFor?: (tx: Db) => RunStatement,
): Promise<string> {
  const { total, rows } = await sql.begin('isolation level repeatable read read only', async (tx) => {
    const count = await readMemberCount(tx, brand.id);
    const window = { offset: (page.page - 1) * page.perPage, limit: page.perPage };
    return {
      total: count.total,
      rows: await seekMembersPage(tx, pageBoundariesOf(sql), brand.id, count, window, runFor?.(tx)),
    };
  });
  return envelopeHead(listUrl, total, page) + rows.map((r) => r.j).join(',') + ENVELOPE_TAIL;
}

/** Rows fetched per statement while a list streams. */
export const STREAM_CHUNK_ROWS = 2000;

/**
 * Bytes a streamed list keeps in the process (in its stream's buffers) for a reader that takes
 * nothing, beside the chunk in hand: the next chunk is fetched only once they drained. The
 * socket's own buffers are the kernel's. Was 1 MB on each side of the stream: stalled readers
 * pinned ~3.7 MB each outside the heap cap (issue 25).
 */
export const STREAM_BUFFER_BYTES = 128 * 1024;

/** The brand's member count (kept, not counted) and highest link seq when a streamed list starts. */
async function listBounds(db: Db, brand: Brand): Promise<{ total: number; lastSeq: string }> {
  // One statement, so the count and the last link are of one snapshot.
  const rows = await db<{ total: string; last_seq: string | null }[]>`
    SELECT (SELECT coalesce(sum(members), 0) FROM brand_member_counts WHERE brand_id = ${brand.id})::text AS total,
           (SELECT max(seq) FROM brand_members WHERE brand_id = ${brand.id})::text AS last_seq`;
  const row = firstRow(rows, 'the bounds of the member list');
  return { total: Number(row.total), lastSeq: row.last_seq ?? '0' };
}

/** The upper bound of the next chunk of brand links after `afterSeq`: STREAM_CHUNK_ROWS links, or fewer at the end. */
async function chunkEnd(db: Db, brand: Brand, afterSeq: string, lastSeq: string): Promise<string | null> {
  const rows = await db<{ upto: string | null }[]>`
    SELECT max(seq)::text AS upto FROM (
      SELECT seq FROM brand_members
      WHERE brand_id = ${brand.id} AND seq > ${afterSeq}::bigint AND seq <= ${lastSeq}::bigint
      ORDER BY seq LIMIT ${STREAM_CHUNK_ROWS}
    ) c`;
  return firstRow(rows, 'the end of the chunk').upto;
}

/**
 * Every member of the brand, streamed (same envelope, last_page 1, per_page = total). `total` is
 * the brand's count when the response starts; members linked after that are not in the list, and
 * a member unlinked while the list streams may be missing from it (openapi.yaml, POST /members/list).
 */
export async function streamAllMembers(sql: Sql, brand: Brand, listUrl: string): Promise<Readable> {
  const { total, lastSeq } = await listBounds(sql, brand);
  return streamJsonChunks({
    head: envelopeHead(listUrl, total, null),
    tail: ENVELOPE_TAIL,
    chunk: async (after) => {
      // One statement a chunk: the next STREAM_CHUNK_ROWS links on the (brand_id, seq) index, each
      // joined to its member, as one text joined by PostgreSQL, and the last one's seq.
      const [row] = await sql`
        SELECT string_agg(j, ',' ORDER BY seq) AS items, max(seq)::text AS next FROM (
          SELECT row_to_json(x)::text AS j, bm.seq
          FROM brand_members bm JOIN members m ON m.id = bm.member_id
          CROSS JOIN LATERAL (SELECT ${memberItemColumns(sql)}) x
          WHERE bm.brand_id = ${brand.id} AND bm.seq > ${after}::bigint AND bm.seq <= ${lastSeq}::bigint
          ORDER BY bm.seq LIMIT ${STREAM_CHUNK_ROWS}
        ) c`.raw();
      const [items, next] = rawRow(row);
      return next ? { items, next: next.toString() } : null;
    },
  });
}

/**
 * POST /import/export: one row per storecard pass of the brand's members (limited to one
 * storecard with `storecard_id`); members without a storecard pass are left out. `points` is the
 * pass's lifetime points, `qr_code` its code. Streamed like the member list, in member order.
 */
export async function exportMembersWithPoints(
  sql: Sql,
  brand: Brand,
  storecardId: string | undefined,
): Promise<Readable> {
  if (storecardId) {
    const [card] = await sql`SELECT 1 FROM storecards WHERE id = ${storecardId} AND brand_id = ${brand.id}`;
    if (!card) throw notFound('Storecard');
  }
  const { lastSeq } = await listBounds(sql, brand);
  return streamJsonChunks({
    head: '{"success":true,"data":[',
    tail: ']}',
    chunk: async (after) => {
      const upto = await chunkEnd(sql, brand, after, lastSeq);
      if (upto === null) return null;
      const [row] = await sql`
        SELECT string_agg(row_to_json(x)::text, ',' ORDER BY bm.seq, p.created_at, p.id)
        FROM brand_members bm
        JOIN members m ON m.id = bm.member_id
        JOIN passes p ON p.member_id = bm.member_id AND p.brand_id = bm.brand_id AND p.kind = 'storecard'
          ${storecardId ? sql`AND p.storecard_id = ${storecardId}` : sql``}
        CROSS JOIN LATERAL (
          SELECT m.email,
                 nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), '') AS name,
                 p.points,
                 p.pass_code AS qr_code
        ) x
        WHERE bm.brand_id = ${brand.id} AND bm.seq > ${after}::bigint AND bm.seq <= ${upto}::bigint`.raw();
      return { items: rawRow(row)[0], next: upto };
    },
  });
}

/**
 * A chunk's items: their JSON texts joined by commas, as PostgreSQL sent them (UTF-8 bytes, never
 * decoded into strings or parsed as rows here: for 100,000 members that was half the server's CPU
 * of a streamed list, profile of issue 17), or null when the chunk has none; `next` is the seq the
 * next chunk starts after. A null chunk ends the list.
 */
type Chunk = { items: Buffer | null; next: string } | null;

/** The columns of a `.raw()` row (null values stay null); an aggregate's one row is always there. */
const rawRow = (row: unknown): [Buffer | null, Buffer | null] => {
  const columns = (row ?? []) as (Buffer | null | undefined)[];
  return [columns[0] ?? null, columns[1] ?? null];
};

/**
 * Streams `head`, the chunks' items joined by commas, then `tail`. Rows come in chunks of
 * brand links by sequence (keyset), each fetched by its own short statement: between chunks no
 * connection is held, so a reader that stops reading costs the database nothing (issue 11: 20
 * stalled readers used to hold every pooled connection). The next chunk is fetched only once
 * the reader has taken the previous one (backpressure), so memory stays flat at any length.
 *
 * The promise settles once the first chunk is in hand: a failing query is still an ordinary
 * error response then; only a failure later in the list can cut the stream short.
 */
export async function streamJsonChunks(source: {
  head: string;
  tail: string;
  chunk: (afterSeq: string) => Promise<Chunk>;
}): Promise<Readable> {
  // Half on each side of the stream: a write past it returns false and the pump waits for 'drain'.
  const out = new PassThrough({ highWaterMark: STREAM_BUFFER_BYTES / 2 });
  const gone = () => out.destroyed || out.writableEnded;
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
    });
  const first = await source.chunk('0');
  const pump = async () => {
    let chunk = first;
    let pending: (string | Buffer)[] = [source.head];
    let wrote = false;
    while (chunk && !gone()) {
      if (chunk.items?.length) {
        if (wrote) pending.push(',');
        pending.push(chunk.items);
        wrote = true;
      }
      let full = false;
      for (const piece of pending) full = !out.write(piece) || full;
      pending = [];
      if (full && !gone()) await drained();
      chunk = await source.chunk(chunk.next);
    }
    if (gone()) return;
    for (const piece of pending) out.write(piece);
    out.end(source.tail);
  };
  pump().catch((error: unknown) => out.destroy(error as Error));
  return out;
}
