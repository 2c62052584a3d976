// The outbox side of a sign-up import: one member.created event per link it made (new members and
// known members newly linked, never a member that was linked already), identifiers only, and one
// fan_out_events job for exactly those events when the organization listens to member.created.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { importSignups } from './members-signups.js';

let db: TestDatabase;
const acme = { organizationIds: ['org-acme'] };
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-acme-kids', 'org-acme', 'Acme Kids')`;
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.sql`DELETE FROM graphile_worker._private_jobs`;
  await db.sql`DELETE FROM webhook_subscriptions`;
});

const signUp = (brandId: string, emails: string[]) =>
  db.sql.begin((tx) => importSignups(tx, acme, { brand_id: brandId, users: emails.map((email) => ({ email })) }));
const eventsAfter = (seq: string) =>
  db.sql<{ id: string; organization_id: string; type: string; data: Record<string, string> }[]>`
    SELECT id, organization_id, type, data FROM events WHERE seq > ${seq}::bigint ORDER BY seq`;
const lastSeq = async () => (await db.sql<{ s: string }[]>`SELECT coalesce(max(seq), 0)::text AS s FROM events`)[0]!.s;
const fanOutJobs = () =>
  db.sql<{ ids: string[] }[]>`
    SELECT j.payload->'event_ids' AS ids FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'fan_out_events'`;

describe('importSignups: events and their fan-out', () => {
  it('records member.created for new and newly linked members only, and queues their fan-out once each', async () => {
    await db.sql`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
      VALUES ('org-acme', 'http://127.0.0.1:1/hook', '{member.created}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=')`;
    const before = await signUp('brand-acme', ['known-linked@example.org', 'known-other@example.org']);
    await signUp('brand-acme-kids', ['known-kids@example.org']);
    await db.sql`DELETE FROM graphile_worker._private_jobs`;
    const seq = await lastSeq();

    const result = await signUp('brand-acme-kids', [
      'fresh-1@example.org',
      'KNOWN-LINKED@example.org',
      'fresh-2@example.org',
      'known-kids@example.org',
    ]);

    expect(Object.keys(result.new)).toEqual(['fresh-1@example.org', 'fresh-2@example.org']);
    expect(result.found).toEqual({
      'KNOWN-LINKED@example.org': before.new['known-linked@example.org'],
      'known-kids@example.org': expect.any(String),
    });
    const events = await eventsAfter(seq);
    // The two new members, then the known member this import linked; the one linked already has none.
    expect(events.map((e) => [e.organization_id, e.type, Object.keys(e.data).sort(), e.data.brand_id])).toEqual(
      Array(3).fill(['org-acme', 'member.created', ['brand_id', 'member_id'], 'brand-acme-kids']),
    );
    expect(
      events
        .slice(0, 2)
        .map((e) => e.data.member_id)
        .sort(),
    ).toEqual(Object.values(result.new).sort());
    expect(events[2]!.data.member_id).toBe(before.new['known-linked@example.org']);
    const jobs = await fanOutJobs();
    expect(jobs.flatMap((j) => j.ids).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('queues one job for an import of new members only', async () => {
    await db.sql`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
      VALUES ('org-acme', 'http://127.0.0.1:1/hook', '{points.changed,member.created}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=')`;
    const seq = await lastSeq();
    await signUp('brand-acme', ['only-new-1@example.org', 'only-new-2@example.org', 'only-new-3@example.org']);
    const events = await eventsAfter(seq);
    expect(events).toHaveLength(3);
    expect((await fanOutJobs()).map((j) => [...j.ids].sort())).toEqual([events.map((e) => e.id).sort()]);
  });

  it('queues no job when nobody listens to member.created (inactive, other types, other organization), and none for an import that linked nobody', async () => {
    await db.sql`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret, active)
      VALUES ('org-acme', 'http://127.0.0.1:1/a', '{member.created}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', false),
             ('org-acme', 'http://127.0.0.1:1/b', '{points.changed}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', true),
             ('org-globex', 'http://127.0.0.1:1/c', '{member.created}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', true)`;
    const seq = await lastSeq();
    await signUp('brand-acme', ['quiet-1@example.org', 'quiet-2@example.org']);
    expect(await eventsAfter(seq)).toHaveLength(2);
    expect(await fanOutJobs()).toEqual([]);

    await db.sql`UPDATE webhook_subscriptions SET active = true`;
    const again = await lastSeq();
    await signUp('brand-acme', ['quiet-1@example.org', 'QUIET-2@example.org']);
    expect(await eventsAfter(again)).toEqual([]);
    expect(await fanOutJobs()).toEqual([]);
  });
});
