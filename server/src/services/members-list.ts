import { PassThrough, type Readable } from 'node:stream';
import type { Db, Sql } from '../db/pool.js';
import { invalidField, notFound } from './errors.js';
import type { Brand } from './members-scope.js';

/** Page sizes of POST /members/list (docs/HELPERS.md: per_page up to 1000). */
export const MEMBERS_PER_PAGE_MAX = 1000;
export const MEMBERS_PER_PAGE_DEFAULT = 100;

/** One member list item as JSON text, built by PostgreSQL (the full list streams 100,000 of these). */
const memberItemJson = (db: Db) => db`
  json_build_object(
    'email', m.email,
    'full_name', nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), ''),
    'identifier', m.id,
    'unsubscribed', bm.unsubscribed::int,
    'last_name', m.last_name,
    'phone_number', m.phone_number,
    'birth_date', m.birth_day,
    'street', m.street,
    'house_number', m.house_number,
    'postcode', m.postcode,
    'city', m.city,
    'country', m.country,
    'subscribed_at', to_char(bm.subscribed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
  )::text`;

const membersOfBrand = (db: Db, brand: Brand) => db`
  FROM brand_members bm JOIN members m ON m.id = bm.member_id
  WHERE bm.brand_id = ${brand.id}`;

export type ListPage = { page: number; perPage: number };

/** page/per_page arrive as strings (spec) or numbers; both absent means the whole list. */
export function readListPage(input: { page?: unknown; per_page?: unknown }): ListPage | null {
  if (input.page == null && input.per_page == null) return null;
  const read = (field: string, value: unknown, fallback: number, max: number) => {
    if (value == null) return fallback;
    const n = typeof value === 'number' ? value : /^\s*\d+\s*$/.test(String(value)) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < 1) throw invalidField(field, `The ${field} field must be an integer of at least 1.`);
    if (n > max) throw invalidField(field, `The ${field} field must not be greater than ${max}.`);
    return n;
  };
  return {
    page: read('page', input.page, 1, Number.MAX_SAFE_INTEGER),
    perPage: read('per_page', input.per_page, MEMBERS_PER_PAGE_DEFAULT, MEMBERS_PER_PAGE_MAX),
  };
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

/** One page of members, as the complete JSON body. */
export async function listMembersPage(db: Db, brand: Brand, page: ListPage, listUrl: string): Promise<string> {
  const [counted] = await db<{ total: number }[]>`SELECT count(*)::int AS total ${membersOfBrand(db, brand)}`;
  const rows = await db<{ j: string }[]>`
    SELECT ${memberItemJson(db)} AS j ${membersOfBrand(db, brand)}
    ORDER BY bm.seq
    LIMIT ${page.perPage} OFFSET ${(page.page - 1) * page.perPage}`;
  return envelopeHead(listUrl, counted!.total, page) + rows.map((r) => r.j).join(',') + ENVELOPE_TAIL;
}

/** Rows per chunk of the streamed lists (about 700 kB of JSON for members). */
const CHUNK = 2000;

/** Every member of the brand, streamed (same envelope, last_page 1, per_page = total). */
export function streamAllMembers(sql: Sql, brand: Brand, listUrl: string): Promise<Readable> {
  return streamJsonArray(sql, {
    head: async (tx) => {
      const [counted] = await tx<{ total: number }[]>`SELECT count(*)::int AS total ${membersOfBrand(tx, brand)}`;
      return envelopeHead(listUrl, counted!.total, null);
    },
    chunk: async (tx, after) => (await tx<Chunk[]>`
      SELECT string_agg(x.j, ',' ORDER BY x.seq) AS json, max(x.seq)::text AS last
      FROM (
        SELECT bm.seq, ${memberItemJson(tx)} AS j ${membersOfBrand(tx, brand)} AND bm.seq > ${after}::bigint
        ORDER BY bm.seq LIMIT ${CHUNK}
      ) x`)[0]!,
    tail: ENVELOPE_TAIL,
  });
}

/**
 * POST /import/export: one row per storecard pass of the brand's members (limited to one
 * storecard with `storecard_id`); members without a storecard pass are left out. `points` is the
 * pass's lifetime points, `qr_code` its code. Streamed like the member list, in member order.
 */
export async function exportMembersWithPoints(sql: Sql, brand: Brand, storecardId: string | undefined): Promise<Readable> {
  if (storecardId) {
    const [card] = await sql`SELECT 1 FROM storecards WHERE id = ${storecardId} AND brand_id = ${brand.id}`;
    if (!card) throw notFound('Storecard');
  }
  const cardFilter = (db: Db) => (storecardId ? db`AND p.storecard_id = ${storecardId}` : db``);
  return streamJsonArray(sql, {
    head: async () => '{"success":true,"data":[',
    chunk: async (tx, after) => (await tx<Chunk[]>`
      WITH chunk AS (
        SELECT seq, member_id FROM brand_members WHERE brand_id = ${brand.id} AND seq > ${after}::bigint ORDER BY seq LIMIT ${CHUNK}
      )
      SELECT (SELECT max(seq)::text FROM chunk) AS last,
             (SELECT string_agg(y.j, ',' ORDER BY y.seq, y.created_at, y.id) FROM (
                SELECT c.seq, p.created_at, p.id, json_build_object(
                         'email', m.email,
                         'name', nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), ''),
                         'points', p.points,
                         'qr_code', p.pass_code)::text AS j
                FROM chunk c
                JOIN members m ON m.id = c.member_id
                JOIN passes p ON p.member_id = c.member_id AND p.brand_id = ${brand.id} AND p.kind = 'storecard' ${cardFilter(tx)}
              ) y) AS json`)[0]!,
    tail: ']}',
  });
}

/** A chunk of a streamed list: its items as JSON texts joined by commas, and where it ended. */
type Chunk = { json: string | null; last: string | null };

/**
 * Streams `head`, the items of every chunk joined by commas, then `tail`, from one read-only
 * REPEATABLE READ transaction (the count in `head` and the items see the same snapshot). The
 * items come in chunks of 2000 by keyset (`brand_members.seq > last`, on its index), each chunk
 * one row of JSON text that PostgreSQL builds: a row per member through a postgres.js cursor
 * cost more in per-row parsing than the whole 2 s budget for 100,000 members. The next chunk is
 * fetched once the client has taken the previous one (stream backpressure), so memory stays flat
 * however long the list is; a client that goes away ends the transaction.
 *
 * The promise settles once the first chunk is in hand: a failing query is still an ordinary
 * error response then; only a failure later in the list can cut the stream short.
 */
export function streamJsonArray(
  sql: Sql,
  list: { head: (tx: Db) => Promise<string>; chunk: (tx: Db, after: string) => Promise<Chunk>; tail: string },
): Promise<Readable> {
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  const gone = () => out.destroyed || out.writableEnded;
  const write = async (text: string) => {
    if (out.write(text) || gone()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
    });
  };
  return new Promise<Readable>((resolve, reject) => {
    let started = false;
    sql
      .begin('isolation level repeatable read read only', async (tx) => {
        let text = await list.head(tx);
        let after = '0';
        let first = true;
        for (;;) {
          const chunk = await list.chunk(tx, after);
          if (!started) resolve(out); // before waiting for the reader: nobody reads until the response starts
          started = true;
          if (chunk.last === null || gone()) break;
          if (chunk.json) {
            text += (first ? '' : ',') + chunk.json;
            first = false;
          }
          await write(text);
          text = '';
          after = chunk.last;
        }
        if (!gone()) out.end(text + list.tail);
      })
      .catch((error: unknown) => {
        if (started) out.destroy(error as Error);
        else reject(error);
      });
  });
}
