// Brand links without a foreign key to members (migration 0031): linking an existing member and
// deleting a member from its last brand take row locks in place of the key, so a link can never
// outlive its member. Each test holds one transaction open mid-way and runs the other against it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import type { Db } from '../../db/pool.js';
import { createMember, deleteMemberFromBrand } from './members.js';
import { importSignups } from './members-signups.js';

let db: TestDatabase;
const acme = { organizationIds: ['org-acme'] };
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-acme-outlet', 'org-acme', 'Acme Outlet')`;
});
afterAll(() => db.drop());

/** Runs `work` in a transaction that stays open until the returned `commit` is called. */
async function openTransaction(work: (tx: Db) => Promise<unknown>) {
  let commit!: () => void;
  const gate = new Promise<void>((resolve) => (commit = resolve));
  let ready!: (value: unknown) => void;
  const done = new Promise((resolve) => (ready = resolve));
  const finished = db.sql.begin(async (tx) => {
    ready(await work(tx));
    await gate;
  });
  return {
    result: await done,
    commit: async () => {
      commit();
      await finished;
    },
  };
}

/** Resolves once some statement of the database waits for a lock. */
async function someoneWaits() {
  for (let i = 0; i < 200; i++) {
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`;
    if (row!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('nobody waited for a lock');
}

const orphans = async () =>
  (
    await db.sql`SELECT bm.member_id FROM brand_members bm WHERE NOT EXISTS (SELECT 1 FROM members m WHERE m.id = bm.member_id)`
  ).length;
const brandsOf = async (memberId: string) =>
  (
    await db.sql<
      { brand_id: string }[]
    >`SELECT brand_id FROM brand_members WHERE member_id = ${memberId} ORDER BY brand_id`
  ).map((r) => r.brand_id);
const memberExists = async (memberId: string) =>
  (await db.sql`SELECT 1 FROM members WHERE id = ${memberId}`).length === 1;
const member = (email: string) => db.sql.begin((tx) => createMember(tx, acme, { brand_id: 'brand-acme', email }));

describe('linking a member while it is deleted from its last brand', () => {
  /** Links an existing member to the outlet brand; answers the member id it linked. */
  const linkers: [string, (tx: Db, email: string) => Promise<string | undefined>][] = [
    [
      'create',
      async (tx, email) =>
        (await createMember(tx, acme, { brand_id: 'brand-acme-outlet', email: email.toUpperCase() })).memberId,
    ],
    [
      'import',
      async (tx, email) =>
        (
          await importSignups(tx, acme, {
            brand_id: 'brand-acme-outlet',
            users: [{ email }, { email: `fresh-${email}` }],
          })
        ).found[email],
    ],
  ];
  it.each(linkers)(
    'keeps the member when the %s that links it to another brand started first',
    async (name, linkExisting) => {
      const email = `${name}-first@example.test`;
      const { memberId } = await member(email);
      const link = await openTransaction((tx) => linkExisting(tx, email));
      expect(link.result).toBe(memberId);
      const deletion = db.sql.begin((tx) => deleteMemberFromBrand(tx, acme, memberId, 'brand-acme'));
      await someoneWaits();
      await link.commit();
      await deletion;
      expect(await memberExists(memberId)).toBe(true);
      expect(await brandsOf(memberId)).toEqual(['brand-acme-outlet']);
      expect(await orphans()).toBe(0);
    },
  );

  it('creates the member anew when the delete started first', async () => {
    const { memberId } = await member('delete-first@example.test');
    const deletion = await openTransaction((tx) => deleteMemberFromBrand(tx, acme, memberId, 'brand-acme'));
    const imported = db.sql.begin((tx) =>
      importSignups(tx, acme, { brand_id: 'brand-acme-outlet', users: [{ email: 'delete-first@example.test' }] }),
    );
    const created = db.sql.begin((tx) =>
      createMember(tx, acme, { brand_id: 'brand-acme-outlet', email: 'DELETE-first@example.test' }),
    );
    await someoneWaits();
    await deletion.commit();
    const [result, again] = await Promise.all([imported, created]);
    expect(await memberExists(memberId)).toBe(false);
    const newId = result.new['delete-first@example.test'] ?? result.found['delete-first@example.test'];
    expect(newId).toBeDefined();
    expect(newId).not.toBe(memberId);
    expect(again.memberId).toBe(newId);
    expect(await brandsOf(newId!)).toEqual(['brand-acme-outlet']);
    expect(await orphans()).toBe(0);
  });
});
