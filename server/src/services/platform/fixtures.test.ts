import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { DEMO_FIXTURES } from '#test-helpers/test-fixtures.js';
import { readMemberCount } from '../members/member-counts.js';
import { loadFixture, loadFixtureFile } from './fixtures.js';

// Issue 27, finding 9: the demo fixtures hold records (tags, members, passes, a finished voucher
// job) so the first call shows data; loading them again, at every start, changes nothing.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(); // the template: the demo fixtures without their records
});
afterAll(() => db?.drop());

/** The number of rows of every table of the schema, and the member count of brand-acme. */
async function snapshot(): Promise<Record<string, number>> {
  const tables = await db.sql<{ name: string }[]>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`;
  const counts: Record<string, number> = {};
  for (const { name } of tables)
    counts[name] = (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${db.sql(name)}`)[0]?.n ?? 0;
  counts['brand-acme members (kept count)'] = (await readMemberCount(db.sql, 'brand-acme')).total;
  return counts;
}

const tagsOfAcme = () =>
  db.sql<{ external_reference: string }[]>`
    SELECT external_reference FROM tags WHERE brand_id = 'brand-acme' ORDER BY created_at, id`;

describe('the demo fixtures', () => {
  it('add tags, members (one opted out), passes and a finished voucher job to brand-acme', async () => {
    expect(await tagsOfAcme()).toEqual([]);
    await loadFixtureFile(db.sql, DEMO_FIXTURES);
    expect((await tagsOfAcme()).map((t) => t.external_reference)).toEqual([
      'demo-regulars',
      'demo-newsletter',
      'demo-gift-box',
    ]);
    const members = await db.sql<{ email: string; unsubscribed: boolean }[]>`
      SELECT m.email, bm.unsubscribed FROM members m JOIN brand_members bm ON bm.member_id = m.id
      WHERE bm.brand_id = 'brand-acme' ORDER BY bm.seq`;
    expect(members).toHaveLength(5);
    expect(members.every((m) => m.email.endsWith('@demo.example.com'))).toBe(true);
    expect(members.filter((m) => m.unsubscribed)).toHaveLength(1);
    expect((await readMemberCount(db.sql, 'brand-acme')).total).toBe(5);
    const passes = await db.sql<{ kind: string; points: number }[]>`
      SELECT kind, points FROM passes WHERE brand_id = 'brand-acme' ORDER BY id`;
    expect(passes).toEqual([
      { kind: 'storecard', points: 120 },
      { kind: 'storecard', points: 45 },
      { kind: 'coupon', points: 0 },
      { kind: 'coupon', points: 0 },
      { kind: 'coupon', points: 0 },
    ]);
    const [job] = await db.sql`SELECT status, total, processed, issued, skipped, failed FROM voucher_jobs`;
    expect(job).toEqual({ status: 'done', total: 3, processed: 3, issued: 3, skipped: 0, failed: 0 });
    expect(await db.sql`SELECT status FROM voucher_grants`).toHaveLength(3);
  });

  it('loaded again (every start loads them) change nothing: every table keeps its rows', async () => {
    const before = await snapshot();
    await loadFixtureFile(db.sql, DEMO_FIXTURES);
    await loadFixtureFile(db.sql, DEMO_FIXTURES);
    expect(await snapshot()).toEqual(before);
  });

  it('never change or bring back what the API changed, and leave out a record whose reference is taken', async () => {
    await db.sql`UPDATE brand_members SET unsubscribed = true WHERE member_id = 'de3b0000-0000-4000-8000-000000000001'`;
    await db.sql`UPDATE tags SET tag = 'Renamed' WHERE id = 'de3a0000-0000-4000-8000-000000000002'`;
    await loadFixtureFile(db.sql, DEMO_FIXTURES);
    const [noor] = await db.sql`
      SELECT unsubscribed FROM brand_members WHERE member_id = 'de3b0000-0000-4000-8000-000000000001'`;
    expect(noor).toEqual({ unsubscribed: true });
    expect(await db.sql`SELECT tag FROM tags WHERE id = 'de3a0000-0000-4000-8000-000000000002'`).toEqual([
      { tag: 'Renamed' },
    ]);

    // A file whose tag, member and pass clash with rows made through the API (another id, the same
    // reference, e-mail or code): those records and what names them are left out, the load succeeds.
    const clash = {
      organizations: [
        {
          id: 'org-acme',
          name: 'Acme Retail',
          tags: [
            {
              id: '0b000000-0000-4000-8000-000000000001',
              brand_id: 'brand-acme',
              tag: 'Clash',
              external_reference: 'demo-regulars',
              member_ids: ['de3b0000-0000-4000-8000-000000000004'],
            },
          ],
          members: [
            {
              id: '0b000000-0000-4000-8000-000000000002',
              brand_id: 'brand-acme',
              email: 'NOOR.janssen@demo.example.com',
            },
          ],
          passes: [
            {
              id: '0b000000-0000-4000-8000-000000000003',
              brand_id: 'brand-acme',
              member_id: '0b000000-0000-4000-8000-000000000002',
              coupon_id: 'coupon-welcome',
              pass_code: 'CLASH00000000001',
            },
          ],
          voucher_jobs: [
            {
              id: '0b000000-0000-4000-8000-000000000004',
              brand_id: 'brand-acme',
              tag_id: '0b000000-0000-4000-8000-000000000001',
              coupon_id: 'coupon-welcome',
              pass_ids: [],
              started_at: '2026-01-01T00:00:00Z',
              finished_at: '2026-01-01T00:00:01Z',
            },
          ],
        },
      ],
    };
    const before = await snapshot();
    await loadFixture(db.sql, clash);
    expect(await snapshot()).toEqual(before);
  });

  it('refuse a pass that names neither or both of coupon_id and storecard_id, naming it', async () => {
    const pass = { id: '0c000000-0000-4000-8000-000000000001', brand_id: 'brand-acme', pass_code: 'X' };
    await expect(
      loadFixture(db.sql, {
        organizations: [
          {
            id: 'org-acme',
            name: 'Acme Retail',
            passes: [{ ...pass, member_id: 'de3b0000-0000-4000-8000-000000000001' }],
          },
        ],
      }),
    ).rejects.toThrow(
      'Fixture pass 0c000000-0000-4000-8000-000000000001 needs exactly one of coupon_id and storecard_id.',
    );
  });
});
