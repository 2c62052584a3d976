import { PassThrough, type Readable } from 'node:stream';
import type { Db, Sql } from '../db/pool.js';
import { firstRow } from '../lib/defined.js';
import { notFound } from './errors.js';
import { readMemberCount } from './member-counts.js';
import { pageBoundariesOf } from './member-page-boundaries.js';
import { memberItemColumns, seekMembersPage, type RunStatement } from './member-pages.js';
import type { Brand } from './members-scope.js';
import { readPaging, type Paging } from './paging.js';

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
      // joined to its member, and the last one's seq (half the round trips of bounding it first).
      const rows = await sql<{ j: string; seq: string }[]>`
        SELECT row_to_json(x)::text AS j, bm.seq::text AS seq
        FROM brand_members bm JOIN members m ON m.id = bm.member_id
        CROSS JOIN LATERAL (SELECT ${memberItemColumns(sql)}) x
        WHERE bm.brand_id = ${brand.id} AND bm.seq > ${after}::bigint AND bm.seq <= ${lastSeq}::bigint
        ORDER BY bm.seq LIMIT ${STREAM_CHUNK_ROWS}`;
      const last = rows.at(-1);
      if (!last) return null;
      return { rows: rows.map((r) => r.j), next: last.seq };
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
      const rows = await sql<{ j: string }[]>`
        SELECT row_to_json(x)::text AS j FROM (
          SELECT m.email,
                 nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), '') AS name,
                 p.points,
                 p.pass_code AS qr_code
          FROM brand_members bm
          JOIN members m ON m.id = bm.member_id
          JOIN passes p ON p.member_id = bm.member_id AND p.brand_id = bm.brand_id AND p.kind = 'storecard'
            ${storecardId ? sql`AND p.storecard_id = ${storecardId}` : sql``}
          WHERE bm.brand_id = ${brand.id} AND bm.seq > ${after}::bigint AND bm.seq <= ${upto}::bigint
          ORDER BY bm.seq, p.created_at, p.id
        ) x`;
      return { rows: rows.map((r) => r.j), next: upto };
    },
  });
}

type Chunk = { rows: string[]; next: string } | null;

/**
 * Streams `head`, the rows' JSON texts joined by commas, then `tail`. Rows come in chunks of
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
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
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
  let chunk = await source.chunk('0');
  let text = source.head + (chunk ? chunk.rows.join(',') : '');
  let wrote = chunk ? chunk.rows.length > 0 : false;
  const pump = async () => {
    while (chunk && !gone()) {
      if (!out.write(text) && !gone()) await drained();
      text = '';
      chunk = await source.chunk(chunk.next);
      if (chunk?.rows.length) {
        text = (wrote ? ',' : '') + chunk.rows.join(',');
        wrote = true;
      }
    }
    if (!gone()) out.end(text + source.tail);
  };
  pump().catch((error: unknown) => out.destroy(error as Error));
  return out;
}
