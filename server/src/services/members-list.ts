import { PassThrough, type Readable } from 'node:stream';
import type postgres from 'postgres';
import type { Db, Sql } from '../db/pool.js';
import { invalidField, notFound } from './errors.js';
import type { Brand } from './members-scope.js';

/** Page sizes of POST /members/list (docs/HELPERS.md: per_page up to 1000). */
export const MEMBERS_PER_PAGE_MAX = 1000;
export const MEMBERS_PER_PAGE_DEFAULT = 100;

/**
 * Member list items as JSON text, built by PostgreSQL (the full list streams 100,000 of them).
 * row_to_json over named columns costs half of what json_build_object does per row.
 */
const memberItems = (db: Db, brand: Brand, extra = db``) => db`
  SELECT row_to_json(x)::text AS j FROM (
    SELECT m.email,
           nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), '') AS full_name,
           m.id AS identifier,
           bm.unsubscribed::int AS unsubscribed,
           m.last_name, m.phone_number, m.birth_day AS birth_date, m.street, m.house_number, m.postcode, m.city, m.country,
           to_char(bm.subscribed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS subscribed_at
    FROM brand_members bm JOIN members m ON m.id = bm.member_id
    WHERE bm.brand_id = ${brand.id}
    ORDER BY bm.seq
    ${extra}
  ) x`;

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
  const rows = await db<{ j: string }[]>`${memberItems(db, brand, db`LIMIT ${page.perPage} OFFSET ${(page.page - 1) * page.perPage}`)}`;
  return envelopeHead(listUrl, counted!.total, page) + rows.map((r) => r.j).join(',') + ENVELOPE_TAIL;
}

/** Every member of the brand, streamed (same envelope, last_page 1, per_page = total). */
export function streamAllMembers(sql: Sql, brand: Brand, listUrl: string): Promise<Readable> {
  return streamJsonArray(sql, async (tx) => {
    const [counted] = await tx<{ total: number }[]>`SELECT count(*)::int AS total ${membersOfBrand(tx, brand)}`;
    return { head: envelopeHead(listUrl, counted!.total, null), rows: tx<{ j: string }[]>`${memberItems(tx, brand)}`, tail: ENVELOPE_TAIL };
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
  return streamJsonArray(sql, async (tx) => ({
    head: '{"success":true,"data":[',
    rows: tx<{ j: string }[]>`
      SELECT row_to_json(x)::text AS j FROM (
        SELECT m.email,
               nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), '') AS name,
               p.points,
               p.pass_code AS qr_code
        FROM brand_members bm
        JOIN members m ON m.id = bm.member_id
        JOIN passes p ON p.member_id = bm.member_id AND p.brand_id = bm.brand_id AND p.kind = 'storecard'
          ${storecardId ? tx`AND p.storecard_id = ${storecardId}` : tx``}
        WHERE bm.brand_id = ${brand.id}
        ORDER BY bm.seq, p.created_at, p.id
      ) x`,
    tail: ']}',
  }));
}

/**
 * Streams `head`, the rows' JSON texts joined by commas, then `tail`, from one read-only
 * REPEATABLE READ transaction (the count in `head` and the rows see the same snapshot). A
 * postgres.js cursor fetches 2000 rows at a time, and the next batch only once the client has
 * taken the previous one (stream backpressure), so memory stays flat however long the list is;
 * a client that goes away closes the cursor.
 *
 * The promise settles once the first batch is in hand: a failing query is still an ordinary
 * error response then; only a failure later in the list can cut the stream short.
 */
export function streamJsonArray(
  sql: Sql,
  prepare: (tx: Db) => Promise<{ head: string; rows: postgres.PendingQuery<{ j: string }[]>; tail: string }>,
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
    const start = () => {
      if (!started) resolve(out); // before waiting for the reader: nobody reads until the response starts
      started = true;
    };
    sql
      .begin('isolation level repeatable read read only', async (tx) => {
        const { head, rows, tail } = await prepare(tx);
        let text = head; // the head goes out with the first batch
        let first = true;
        await rows.cursor(2000, async (batch) => {
          if (gone()) return sql.CLOSE;
          start();
          text += (first ? '' : ',') + batch.map((r) => r.j).join(',');
          first = false;
          await write(text);
          text = '';
          return undefined;
        });
        start();
        if (!gone()) out.end(text + tail);
      })
      .catch((error: unknown) => {
        if (started) out.destroy(error as Error);
        else reject(error);
      });
  });
}
