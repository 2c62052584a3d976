// POST /members/list pages at any depth (issue 18): pages seek on the link index from remembered
// boundaries (services/members/member-pages.ts), `total` is the kept count (services/members/member-counts.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { useApiTestServer, type Json, type TestServer } from '#test-helpers/server.js';
import { createPool, type Db } from '../db/pool.js';
import { listMembersPage } from '../services/members/members-list.js';
import { BUCKET_SEQS, type RunStatement } from '../services/members/member-pages.js';

let t: TestServer;
const call = useApiTestServer((api) => ({ t } = api));
const BRAND = 'brand-pages';
const MEMBERS = 50_000;
const PER_PAGE = 1000;

beforeAll(async () => {
  await t.db.sql`INSERT INTO brands (id, organization_id, name) VALUES (${BRAND}, 'org-acme', 'Pages')`;
  // Links in an order unlike the members' (a hash of i), every fifth member linked to a second
  // brand in between, so the brand's seqs have gaps.
  await t.db.sql`
    WITH m AS (
      INSERT INTO members (organization_id, email, first_name)
      SELECT 'org-acme', 'p-' || i || '@example.org', 'P' || i FROM generate_series(1, ${MEMBERS}::int) i
      RETURNING id, email
    )
    INSERT INTO brand_members (brand_id, member_id)
    SELECT b.brand_id, m.id FROM m
    CROSS JOIN LATERAL (VALUES (${BRAND}), ('brand-acme')) b(brand_id)
    WHERE b.brand_id = ${BRAND} OR split_part(split_part(m.email, '@', 1), '-', 2)::int % 5 = 0
    ORDER BY md5(m.email), b.brand_id`;
}, 60_000);

const page = (n: number, perPage = PER_PAGE) =>
  call('POST', '/members/list', { brand_id: BRAND, page: n, per_page: perPage });
const emailsOf = (body: Json) => (body.data.members as Json[]).map((m) => m.email as string);
/** The brand's members in link order, as PostgreSQL says (the truth the pages are held to). */
const linkOrder = async () =>
  (
    await t.db.sql<{ email: string }[]>`
      SELECT m.email FROM brand_members bm JOIN members m ON m.id = bm.member_id WHERE bm.brand_id = ${BRAND} ORDER BY bm.seq`
  ).map((r) => r.email);

describe('POST /members/list pages of a brand of 50,000 members', () => {
  it('walked 1..N give every member exactly once, in link order, the same as the streamed list', async () => {
    const truth = await linkOrder();
    expect(truth).toHaveLength(MEMBERS);
    const walked: string[] = [];
    for (let n = 1; n <= MEMBERS / PER_PAGE; n++) {
      const res = await page(n);
      expect(res.body.data).toMatchObject({ total: MEMBERS, last_page: MEMBERS / PER_PAGE, per_page: PER_PAGE });
      walked.push(...emailsOf(res.body));
    }
    expect((await page(MEMBERS / PER_PAGE + 1)).body.data.members).toEqual([]);
    expect(new Set(walked).size).toBe(MEMBERS);
    expect(walked).toEqual(truth);
    const streamed = await call('POST', '/members/list', { brand_id: BRAND });
    expect(streamed.body.data.total).toBe(MEMBERS);
    expect(emailsOf(streamed.body)).toEqual(walked);
  }, 60_000);

  it('answers any page of any size as the list is now, after links and unlinks between requests', async () => {
    const expectPage = async (n: number, perPage: number) => {
      const truth = await linkOrder();
      const res = await page(n, perPage);
      expect(res.body.data.total).toBe(truth.length);
      expect(emailsOf(res.body)).toEqual(truth.slice((n - 1) * perPage, n * perPage));
    };
    // Deep pages first (a skeleton of boundaries is laid), then their neighbours.
    for (const [n, perPage] of [
      [45, 1000],
      [44, 1000],
      [451, 100],
      [3, 7],
      [7142, 7],
    ] as const)
      await expectPage(n, perPage);
    // An unlink before the remembered boundaries shifts every page after it by one.
    await t.db.sql`
      DELETE FROM brand_members WHERE brand_id = ${BRAND}
      AND seq = (SELECT seq FROM brand_members WHERE brand_id = ${BRAND} ORDER BY seq OFFSET 1500 LIMIT 1)`;
    await expectPage(45, 1000);
    await expectPage(451, 100);
    // Links: one at the end, and the last one moved near the start (a seq of the other brand's,
    // free in this one, below every remembered boundary).
    await t.db.sql`
      WITH m AS (INSERT INTO members (organization_id, email) VALUES ('org-acme', 'p-late@example.org') RETURNING id)
      INSERT INTO brand_members (brand_id, member_id) SELECT ${BRAND}, id FROM m`;
    await expectPage(50, 1000);
    await t.db.sql`
      UPDATE brand_members SET seq = (
        SELECT min(seq) FROM brand_members
        WHERE brand_id = 'brand-acme' AND seq > (SELECT min(seq) FROM brand_members WHERE brand_id = ${BRAND}))
      WHERE brand_id = ${BRAND} AND seq = (SELECT max(seq) FROM brand_members WHERE brand_id = ${BRAND})`;
    await expectPage(45, 1000);
    await expectPage(50, 1000);
    await expectPage(7142, 7);
  }, 60_000);
});

type PlanNode = { 'Relation Name'?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: PlanNode[] };

/** Rows each table gave the statements of one page request (EXPLAIN ANALYZE of each statement it runs). */
async function rowsRead(sql: ReturnType<typeof createPool>, n: number): Promise<Record<string, number>> {
  const read: Record<string, number> = {};
  const add = (node: PlanNode) => {
    const table = node['Relation Name'];
    if (table) read[table] = (read[table] ?? 0) + Math.round(node['Actual Rows'] * node['Actual Loops']);
    for (const child of node.Plans ?? []) add(child);
  };
  const explained =
    (tx: Db): RunStatement =>
    async (statement) => {
      const [row] = await tx<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>`EXPLAIN (ANALYZE, FORMAT JSON) ${statement()}`;
      add(row!['QUERY PLAN'][0].Plan);
      return statement();
    };
  const brand = { id: BRAND, organizationId: 'org-acme' };
  const body = JSON.parse(
    await listMembersPage(sql, brand, { page: n, perPage: PER_PAGE }, 'http://x/members/list', explained),
  );
  expect(body.data.members).toHaveLength(PER_PAGE);
  return read;
}

describe('a deep page against a shallow one', () => {
  it('reads one page of members and links at any depth, cold or warm: never the links before the page', async () => {
    // A pool of its own: remembered boundaries live per pool, so its first requests are cold.
    const sql = createPool(t.db.url, { max: 2 });
    try {
      const shallow = await rowsRead(sql, 1);
      const deepCold = await rowsRead(sql, 45);
      const deepAgain = await rowsRead(sql, 45);
      const next = await rowsRead(sql, 46);
      for (const read of [shallow, deepCold, deepAgain, next]) expect(read.members).toBe(PER_PAGE);
      // Links: a page reads its own twice (their seqs on the index, then each link by key). The cold
      // deep page starts at the bucket of seqs its first link is in (the brand's bucket counts say
      // how many links come before it) and skips less than a bucket on the index; a page the process
      // has seen the way to reads its own links only.
      expect(deepCold.brand_members).toBeLessThan(2 * PER_PAGE + BUCKET_SEQS);
      // The 60,000 links of both brands span 15 buckets of seqs, a row per bucket and shard written.
      expect(deepCold.brand_member_buckets).toBeLessThanOrEqual(2 * Math.ceil(60_001 / BUCKET_SEQS));
      for (const read of [shallow, deepAgain, next]) {
        expect(read.brand_members).toBe(2 * PER_PAGE);
        expect(read.brand_member_buckets).toBeUndefined();
      }
    } finally {
      await sql.end();
    }
  });
});
