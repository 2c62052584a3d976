// The outbox's rule through each of its doors, on real PostgreSQL: the events are written, and ONE
// fan-out job is queued for them only when an active subscription of their organization listens to
// one of their types. The voucher round (recorded + queueFanOut) is covered in voucher-rounds.test.ts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import type { Db } from '../../db/pool.js';
import {
  FAN_OUT_EVENTS,
  queueFanOut,
  recordedAndQueued,
  recordEvents,
  resumeStalledFanOuts,
  type Listeners,
} from './outbox.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO organizations (id, name) VALUES ('org-outbox-other', 'Other') ON CONFLICT DO NOTHING`;
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.sql`DELETE FROM graphile_worker._private_jobs`;
  await db.sql`DELETE FROM webhook_subscriptions`;
});

const SECRET = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const subscribe = (organizationId: string, events: string[], active = true) => db.sql`
  INSERT INTO webhook_subscriptions (organization_id, url, events, secret, active)
  VALUES (${organizationId}, 'http://127.0.0.1:1/hook', ${events}, ${SECRET}, ${active})`;
const fanOutJobs = () =>
  db.sql<{ ids: string[]; priority: number }[]>`
    SELECT j.payload->'event_ids' AS ids, j.priority FROM graphile_worker._private_jobs j
    JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = ${FAN_OUT_EVENTS} ORDER BY j.id`;
const eventsOf = (ids: string[]) =>
  db.sql<{ id: string; organization_id: string; type: string; data: Record<string, unknown> }[]>`
    SELECT id, organization_id, type, data FROM events WHERE id = ANY(${ids}::uuid[]) ORDER BY seq`;

/** Nobody listens, for each of the reasons: inactive, another type, another organization. */
async function subscribeNobody() {
  await subscribe('org-acme', ['member.created'], false);
  await subscribe('org-acme', ['points.changed']);
  await subscribe('org-outbox-other', ['member.created']);
}

describe('recordEvents (row-wise)', () => {
  const events = [
    { organizationId: 'org-acme', type: 'member.created' as const, data: { member_id: 'm-1', brand_id: 'b' } },
    { organizationId: 'org-acme', type: 'coupon.issued' as const, data: { pass_id: 'p-1' } },
    { organizationId: 'org-acme', type: 'member.created' as const, data: { member_id: 'm-2', brand_id: 'b' } },
  ];

  it('writes the events, answers their ids in the order given, and queues one job for all of them when someone listens', async () => {
    await subscribe('org-acme', ['coupon.issued']);
    const ids = await db.sql.begin((tx) => recordEvents(tx, events));
    expect(ids).toHaveLength(3);
    const written = await eventsOf(ids);
    expect(written.map((e) => e.id)).toEqual(ids);
    expect(written.map((e) => [e.organization_id, e.type, e.data])).toEqual(
      events.map((e) => [e.organizationId, e.type, e.data]),
    );
    expect(await fanOutJobs()).toEqual([{ ids, priority: 0 }]);
  });

  it('queues no job when nobody listens, and writes the events all the same', async () => {
    await subscribeNobody();
    const ids = await db.sql.begin((tx) => recordEvents(tx, events));
    expect(await eventsOf(ids)).toHaveLength(3);
    expect(await fanOutJobs()).toEqual([]);
  });

  it('writes nothing and queues nothing for no events', async () => {
    await subscribe('org-acme', ['member.created']);
    expect(await recordEvents(db.sql, [])).toEqual([]);
    expect(await fanOutJobs()).toEqual([]);
  });

  it('rolls the events and the job back with the transaction', async () => {
    await subscribe('org-acme', ['member.created']);
    let ids: string[] = [];
    await expect(
      db.sql.begin(async (tx) => {
        ids = await recordEvents(tx, events);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(ids).toHaveLength(3);
    expect(await eventsOf(ids)).toEqual([]);
    expect(await fanOutJobs()).toEqual([]);
  });
});

describe('recordedAndQueued (set-based, in a larger statement)', () => {
  const listeners: Listeners = { organizationIds: ['org-acme'], types: ['member.created'] };
  /** One statement: `n` member.created events made from its own rows, and the count of jobs it queued. */
  const statement = (n: number, priority?: number) =>
    db.sql<{ id: string; jobs: number }[]>`
      WITH ${recordedAndQueued(
        db.sql,
        db.sql`SELECT 'org-acme' AS organization_id, 'member.created' AS type,
                      jsonb_build_object('member_id', 'm-' || i, 'brand_id', 'brand-acme') AS data
               FROM generate_series(1, ${n}::int) i`,
        listeners,
        { priority },
      )}
      SELECT r.id, q.jobs FROM recorded r RIGHT JOIN queued q ON true`;

  it('writes one event per row and queues one job for all of them when someone listens', async () => {
    await subscribe('org-acme', ['points.changed', 'member.created']);
    const rows = await statement(4, -3);
    const ids = rows.map((r) => r.id);
    expect(rows.map((r) => r.jobs)).toEqual([1, 1, 1, 1]);
    const written = await eventsOf(ids);
    expect(written.map((e) => e.data.member_id).sort()).toEqual(['m-1', 'm-2', 'm-3', 'm-4']);
    expect((await fanOutJobs()).map((j) => ({ ids: [...j.ids].sort(), priority: j.priority }))).toEqual([
      { ids: [...ids].sort(), priority: -3 },
    ]);
  });

  it('queues no job when nobody listens', async () => {
    await subscribeNobody();
    const rows = await statement(2);
    expect(await eventsOf(rows.map((r) => r.id))).toHaveLength(2);
    expect(await fanOutJobs()).toEqual([]);
  });

  it('queues no job for a statement that made no events, even when someone listens', async () => {
    await subscribe('org-acme', ['member.created']);
    expect(await statement(0)).toEqual([{ id: null, jobs: 0 }]);
    expect(await fanOutJobs()).toEqual([]);
  });
});

describe('queueFanOut (the job of events recorded earlier in the transaction)', () => {
  const listeners: Listeners = { organizationIds: ['org-outbox-other', 'org-acme'], types: ['coupon.issued'] };
  const record = (tx: Db) =>
    tx<{ id: string }[]>`
      INSERT INTO events (organization_id, type, data) VALUES ('org-acme', 'coupon.issued', '{}'), ('org-acme', 'coupon.issued', '{}')
      RETURNING id`;

  it('queues one job with the ids given and the priority asked, when any of the organizations listens', async () => {
    await subscribe('org-acme', ['coupon.issued']);
    const ids = await db.sql.begin(async (tx) => {
      const recorded = (await record(tx)).map((r) => r.id);
      await queueFanOut(tx, recorded, listeners, { priority: -1 });
      return recorded;
    });
    expect(await fanOutJobs()).toEqual([{ ids, priority: -1 }]);
  });

  it('queues none when nobody listens, and none for no ids', async () => {
    await subscribeNobody();
    await db.sql.begin(async (tx) =>
      queueFanOut(
        tx,
        (await record(tx)).map((r) => r.id),
        listeners,
      ),
    );
    await subscribe('org-acme', ['coupon.issued']);
    await queueFanOut(db.sql, [], listeners);
    expect(await fanOutJobs()).toEqual([]);
  });
});

describe('resumeStalledFanOuts', () => {
  it('frees a fan-out job that a killed worker held past the stall time, and leaves one held for less', async () => {
    await subscribe('org-acme', ['coupon.issued']);
    const event = [{ organizationId: 'org-acme', type: 'coupon.issued' as const, data: { pass_id: 'p-stalled' } }];
    await db.sql.begin((tx) => recordEvents(tx, event));
    await db.sql.begin((tx) => recordEvents(tx, event));
    // Both jobs were taken by a worker that was then killed: one long ago, one just now.
    await db.sql`
      UPDATE graphile_worker._private_jobs j SET locked_by = 'killed-worker',
        locked_at = now() - CASE WHEN j.id = (SELECT min(id) FROM graphile_worker._private_jobs) THEN interval '1 hour' ELSE interval '1 second' END`;
    expect(await resumeStalledFanOuts(db.sql, 60)).toBe(1);
    const jobs = await db.sql<{ locked: boolean; due: boolean }[]>`
      SELECT locked_at IS NOT NULL AS locked, run_at <= now() AS due FROM graphile_worker._private_jobs ORDER BY id`;
    expect(jobs).toEqual([
      { locked: false, due: true },
      { locked: true, due: true },
    ]);
  });
});
