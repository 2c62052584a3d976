// The per-brand member count kept by triggers (migration 0038) against count(*) of the links,
// through every path that links and unlinks members, concurrent ones included.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { migrationsDir } from '../../db/migrate.js';
import type { Db } from '../../db/pool.js';
import { defined } from '../../lib/defined.js';
import { readMemberCount } from './member-counts.js';
import { createMember, deleteMemberFromBrand } from './members.js';
import { importSignups } from './members-signups.js';
import { setSubscriptionBulk } from './members-subscription.js';
import { resetSandbox } from '../sandbox/sandbox-reset.js';

let db: TestDatabase;
const acme = { organizationIds: ['org-acme'] };
const BRAND = 'brand-counted';
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO brands (id, organization_id, name) VALUES (${BRAND}, 'org-acme', 'Counted'), ('brand-counted-2', 'org-acme', 'Counted 2')`;
});
afterAll(() => db.drop());

/** Brands (and buckets of seqs) whose kept count differs from count(*) of their links: none, ever. */
const miscounted = async (on: Db = db.sql) => [
  ...(await on`
    SELECT coalesce(l.brand_id, c.brand_id) AS brand_id, l.n AS counted, c.n AS kept
    FROM (SELECT brand_id, count(*)::int AS n FROM brand_members GROUP BY brand_id) l
    FULL JOIN (SELECT brand_id, sum(members)::int AS n FROM brand_member_counts GROUP BY brand_id) c USING (brand_id)
    WHERE l.n IS DISTINCT FROM c.n AND coalesce(l.n, 0) + coalesce(c.n, 0) > 0`),
  ...(await on`
    SELECT coalesce(l.brand_id, c.brand_id) AS brand_id, coalesce(l.bucket, c.bucket) AS bucket, l.n AS counted, c.n AS kept
    FROM (SELECT brand_id, seq >> 12 AS bucket, count(*)::int AS n FROM brand_members GROUP BY 1, 2) l
    FULL JOIN (SELECT brand_id, bucket, sum(members)::int AS n FROM brand_member_buckets GROUP BY 1, 2) c USING (brand_id, bucket)
    WHERE l.n IS DISTINCT FROM c.n AND coalesce(l.n, 0) + coalesce(c.n, 0) > 0`),
];
const total = async (brand = BRAND) => (await readMemberCount(db.sql, brand)).total;
const version = async (brand = BRAND) => (await readMemberCount(db.sql, brand)).version;
const signups = (emails: string[], brand = BRAND) =>
  db.sql.begin((tx) => importSignups(tx, acme, { brand_id: brand, users: emails.map((email) => ({ email })) }));
const emails = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}@example.org`);

describe('the kept member count of a brand', () => {
  it('follows sign-ups, creates, links of known members and repeats that link nobody', async () => {
    expect(await total()).toBe(0);
    await signups(emails('a', 30));
    expect(await total()).toBe(30);
    await signups([...emails('a', 30), ...emails('b', 5)]);
    expect(await total()).toBe(35);
    const before = await version();
    await signups(emails('a', 10));
    expect(await version()).toBe(before);
    await db.sql.begin((tx) => createMember(tx, acme, { brand_id: BRAND, email: 'single@example.org' }));
    // A known member linked to a second brand counts there, and stays counted in the first.
    await signups(emails('a', 4), 'brand-counted-2');
    expect([await total(), await total('brand-counted-2')]).toEqual([36, 4]);
    expect(await miscounted()).toEqual([]);
  });

  it('follows bulk links in one statement, and a transaction that rolls back counts nothing', async () => {
    const before = await total();
    await db.sql`
      WITH m AS (INSERT INTO members (organization_id, email) SELECT 'org-acme', 'bulk-' || i || '@example.org' FROM generate_series(1, 5000) i RETURNING id)
      INSERT INTO brand_members (brand_id, member_id) SELECT ${BRAND}, id FROM m`;
    expect(await total()).toBe(before + 5000);
    await expect(
      db.sql.begin(async (tx) => {
        await tx`INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-counted-2', member_id FROM brand_members WHERE brand_id = ${BRAND} ON CONFLICT DO NOTHING`;
        expect(await readMemberCount(tx, 'brand-counted-2')).toMatchObject({ total: 5036 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await total('brand-counted-2')).toBe(4);
    expect(await miscounted()).toEqual([]);
  });

  it('follows deletes of a member from a brand: the link goes, and the member row with its last link', async () => {
    const before = await total();
    const [one, two] = await db.sql<{ id: string }[]>`
      SELECT m.id FROM members m WHERE lower(email) IN ('a-0@example.org', 'b-0@example.org') ORDER BY email`;
    await db.sql.begin((tx) => deleteMemberFromBrand(tx, acme, one!.id, BRAND));
    await db.sql.begin((tx) => deleteMemberFromBrand(tx, acme, two!.id, BRAND));
    expect(await total()).toBe(before - 2);
    // a-0 is linked to the second brand too: it keeps that link.
    expect(await total('brand-counted-2')).toBe(4);
    await db.sql`DELETE FROM brand_members WHERE brand_id = ${BRAND} AND member_id IN (SELECT id FROM members WHERE email LIKE 'bulk-1%')`;
    expect(await total()).toBe(before - 2 - 1111);
    expect(await miscounted()).toEqual([]);
  });

  it('moves with links moved to another brand; subscribing and unsubscribing change neither count nor version', async () => {
    const [a, b] = [await total(), await total('brand-counted-2')];
    const before = await version();
    await db.sql.begin((tx) => setSubscriptionBulk(tx, acme, { brand_id: BRAND, email: emails('a', 20) }, false));
    await db.sql`UPDATE brand_members SET unsubscribed = NOT unsubscribed WHERE brand_id = ${BRAND}`;
    expect(await version()).toBe(before);
    await db.sql`
      UPDATE brand_members SET brand_id = 'brand-counted-2'
      WHERE brand_id = ${BRAND} AND member_id IN (SELECT id FROM members WHERE email LIKE 'bulk-2%')`;
    expect([await total(), await total('brand-counted-2')]).toEqual([a - 1111, b + 1111]);
    expect(await version()).not.toBe(before);
    expect(await miscounted()).toEqual([]);
  });

  it("is backfilled by the migrations from the links there are (the migrations' own statements)", async () => {
    const backfills = await Promise.all(
      [
        ['0038_brand_member_counts.sql', /^INSERT INTO brand_member_counts[^;]*;/m],
        ['0039_brand_member_buckets.sql', /^INSERT INTO brand_member_buckets[^;]*;/m],
      ].map(async ([file, statement]) => {
        const migration = await readFile(path.join(migrationsDir, file as string), 'utf8');
        return defined((statement as RegExp).exec(migration), `the backfill of ${file}`)[0];
      }),
    );
    let after: unknown[] = ['not run'];
    await expect(
      db.sql.begin(async (tx) => {
        await tx`DELETE FROM brand_member_counts`;
        await tx`DELETE FROM brand_member_buckets`;
        for (const backfill of backfills) await tx.unsafe(backfill);
        after = await miscounted(tx);
        throw new Error('undone');
      }),
    ).rejects.toThrow('undone');
    expect(after).toEqual([]);
  });

  it('stays exact under concurrent sign-ups of one brand from several connections', async () => {
    const before = await total();
    // Eight imports at once, half of the e-mails shared between two of them (one links, the other finds).
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => signups([...emails(`c${i}`, 200), ...emails(`c${(i + 1) % 8}`, 100)])),
    );
    expect(await total()).toBe(before + 8 * 200);
    const [shards] = await db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM brand_member_counts WHERE brand_id = ${BRAND}`;
    expect(shards!.n).toBeGreaterThanOrEqual(1);
    expect(await miscounted()).toEqual([]);
  });

  it('starts from 0 after TRUNCATE of the links, with a version never seen before', async () => {
    const before = await readMemberCount(db.sql, BRAND);
    let truncated = before;
    await expect(
      db.sql.begin(async (tx) => {
        await tx`TRUNCATE brand_members`;
        truncated = await readMemberCount(tx, BRAND);
        throw new Error('undone');
      }),
    ).rejects.toThrow('undone');
    expect(before.total).toBeGreaterThan(0);
    expect(truncated.total).toBe(0);
    expect(truncated.version).not.toBe(before.version);
    expect(await readMemberCount(db.sql, BRAND)).toEqual(before);
  });

  it('matches the links again after a sandbox reset, whose versions never repeat one from before it', async () => {
    await db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-acme', 'org-acme', 'Acme') ON CONFLICT DO NOTHING`;
    const versions = new Set<string>();
    for (let round = 0; round < 2; round++) {
      await signups(emails('reset', 3), 'brand-acme');
      const seen = await version('brand-acme');
      expect(versions.has(seen)).toBe(false);
      versions.add(seen);
      await resetSandbox(db.sql, path.resolve(import.meta.dirname, '../../../../fixtures/demo.json'));
      expect(await miscounted()).toEqual([]);
    }
    const [links] = await db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM brand_members WHERE brand_id = 'brand-acme'`;
    expect(await total('brand-acme')).toBe(links!.n);
  });
});
