import type postgres from 'postgres';
import type { Db } from '../../db/pool.js';
import type { MemberCount } from './member-counts.js';
import type { Boundary, PageBoundaries } from './member-page-boundaries.js';

/**
 * The columns of one member list item, from `m` (members) and `bm` (its brand link). row_to_json
 * over named columns costs half of what json_build_object does per row.
 */
export const memberItemColumns = (db: Db) => db`
  m.email,
  nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), '') AS full_name,
  m.id AS identifier,
  bm.unsubscribed::int AS unsubscribed,
  m.last_name, m.phone_number, m.birth_day AS birth_date, m.street, m.house_number, m.postcode, m.city, m.country,
  to_char(bm.subscribed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS subscribed_at`;

/** Seqs per bucket of brand_member_buckets (migration 0039: the bucket of a link is seq >> 12). */
export const BUCKET_SEQS = 4096;

/** A page's member as JSON text, and its link's seq (the page's last one is the next boundary). */
export type MemberPageRow = { j: string; seq: string };

/** Runs one statement of a page (members-list-pages.test.ts runs each under EXPLAIN ANALYZE too). */
export type RunStatement = <T extends readonly postgres.MaybeRow[]>(
  statement: () => postgres.PendingQuery<T>,
) => Promise<T>;
const direct: RunStatement = (statement) => statement();

/**
 * The members at `offset` .. `offset + limit` of the brand's list, in link order (seq). Seeks
 * from the nearest remembered boundary at or below `offset` on the (brand_id, seq) index, skips
 * the rest of the way there on that index alone (index-only), and joins members for the page's
 * own rows only. Where that way is longer than a bucket of seqs (a deep page nobody walked to in
 * this version of the list), the brand's bucket counts say how many links come before the
 * bucket the page starts in: the page skips fewer than BUCKET_SEQS links, at any depth.
 * Remembers the boundaries before and after the page it served, so a client walking pages 1..N
 * (or asking for one page again) costs one page's rows a page.
 *
 * `count` must be read in the same snapshot as the statements here (a REPEATABLE READ
 * transaction: listMembersPage): boundaries are remembered under the version they were read in.
 */
export async function seekMembersPage(
  tx: Db,
  boundaries: PageBoundaries,
  brandId: string,
  count: MemberCount,
  window: { offset: number; limit: number },
  run: RunStatement = direct,
): Promise<MemberPageRow[]> {
  const { offset, limit } = window;
  if (offset >= count.total) return [];
  await orderedIndexScans(tx);
  let from = boundaries.nearest(brandId, count.version, offset);
  if (offset - from.offset >= BUCKET_SEQS) {
    const [bucket] = await run(() => bucketStart(tx, brandId, offset));
    if (bucket && Number(bucket.before) > from.offset)
      from = { offset: Number(bucket.before), seq: String(BigInt(bucket.bucket) * BigInt(BUCKET_SEQS) - 1n) };
  }
  const rows = await run(() => pageRows(tx, brandId, from, offset - from.offset, limit));
  const [first, last] = [rows[0], rows.at(-1)];
  if (first && last)
    boundaries.remember(brandId, count.version, [
      // The links before the page's first have smaller seqs; those up to its last, at most its seq.
      { offset, seq: String(BigInt(first.seq) - 1n) },
      { offset: offset + rows.length, seq: last.seq },
    ]);
  return rows;
}

/** The bucket of the brand's link at `offset`, and how many of the brand's links come before it. */
const bucketStart = (db: Db, brandId: string, offset: number) => db<{ bucket: string; before: string }[]>`
  SELECT bucket::text AS bucket, before::text AS before FROM (
    SELECT bucket, sum(sum(members)) OVER (ORDER BY bucket) - sum(members) AS before, sum(members) AS members
    FROM brand_member_buckets WHERE brand_id = ${brandId}
    GROUP BY bucket
  ) b
  WHERE before + members > ${offset}::bigint
  ORDER BY bucket LIMIT 1`;

/**
 * `limit` links from the `skip`-th after `from` with their members. The page's seqs come from the
 * (brand_id, seq) index alone, skipping included (index-only); its links and members are then
 * read by key, one lookup a row (LATERAL … LIMIT 1 cannot become a hash or merge join over
 * the whole brand).
 */
const pageRows = (db: Db, brandId: string, from: Boundary, skip: number, limit: number) => db<MemberPageRow[]>`
  SELECT row_to_json(x)::text AS j, p.seq::text AS seq
  FROM (
    SELECT seq FROM brand_members
    WHERE brand_id = ${brandId} AND seq > ${from.seq}::bigint
    ORDER BY seq OFFSET ${skip}::bigint LIMIT ${limit}::int
  ) p
  CROSS JOIN LATERAL (
    SELECT member_id, unsubscribed, subscribed_at FROM brand_members l
    WHERE l.brand_id = ${brandId} AND l.seq = p.seq LIMIT 1
  ) bm
  CROSS JOIN LATERAL (SELECT * FROM members WHERE id = bm.member_id LIMIT 1) m
  CROSS JOIN LATERAL (SELECT ${memberItemColumns(db)}) x
  ORDER BY p.seq`;

/**
 * The statements above must walk the (brand_id, seq) index in order. Right after a bulk import,
 * before autovacuum has analyzed brand_members, the planner underestimates a brand and prefers
 * a bitmap scan of all its links and a sort (measured: 50,000 links read for a page of 1000);
 * these settings, for this read-only transaction only, leave it the ordered index scan.
 */
export const orderedIndexScans = (db: Db) =>
  db`SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`;
