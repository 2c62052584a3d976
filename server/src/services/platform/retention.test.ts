import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { loadConfig, type Config } from '../../config.js';
import type { Sql } from '../../db/pool.js';
import { pruneOldRowsTask } from '../../tasks/prune-old-rows.js';
import { startWorker } from '../../worker.js';
import { describePurge, noPurgeCounts, purgeOldRows } from './retention.js';
import { deleteTag } from '../tags/tags.js';

/**
 * Retention against a real PostgreSQL: rows are written with old timestamps, then purged.
 * Fixture rows of the seeded template: organization org-acme, brand brand-acme, client acme-admin.
 */

let db: TestDatabase;
let sql: Sql;
const ORG = 'org-acme';
const BRAND = 'brand-acme';

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sql;
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await sql`DELETE FROM webhook_attempts`;
  await sql`DELETE FROM webhook_deliveries`;
  await sql`DELETE FROM webhook_subscriptions`;
  await sql`DELETE FROM events`;
  await sql`DELETE FROM voucher_jobs`;
  await sql`DELETE FROM voucher_grants`;
  await sql`DELETE FROM access_tokens`;
  await sql`DELETE FROM idempotency_keys`;
  await sql`DELETE FROM graphile_worker._private_jobs`;
});

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);

async function event(createdAt: Date): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO events (organization_id, type, data, created_at) VALUES (${ORG}, 'member.created', '{}', ${createdAt}) RETURNING id`;
  return row!.id;
}

async function subscription(): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
    VALUES (${ORG}, 'https://example.com/hook', '{member.created}', 'secret') RETURNING id`;
  return row!.id;
}

async function delivery(
  subscriptionId: string,
  eventId: string,
  status: string,
  createdAt: Date,
  updatedAt = createdAt,
  attempts = 0,
) {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
    VALUES (${subscriptionId}, ${eventId}, 'member.created', ${status}, ${attempts}, ${status === 'pending' ? createdAt : null}, ${createdAt}, ${updatedAt})
    RETURNING id`;
  for (let a = 1; a <= attempts; a++) {
    await sql`INSERT INTO webhook_attempts (delivery_id, attempt, status_code, duration_ms, attempted_at) VALUES (${row!.id}, ${a}, 500, 10, ${createdAt})`;
  }
  return row!.id;
}

const ids = async (table: 'events' | 'webhook_deliveries') =>
  (await sql<{ id: string }[]>`SELECT id FROM ${sql(table)}`).map((r) => r.id).sort();
const count = async (query: Promise<{ n: number }[]>) => (await query)[0]!.n;

describe('purgeOldRows', () => {
  it('deletes old finished deliveries with their attempts and old events; keeps pending deliveries and their events, and young rows', async () => {
    const sub = await subscription();
    const delivered = await event(daysAgo(40));
    const pending = await event(daysAgo(40));
    const alone = await event(daysAgo(31));
    const retried = await event(daysAgo(40));
    const young = await event(daysAgo(29));
    const oldDelivered = await delivery(sub, delivered, 'delivered', daysAgo(40), daysAgo(40), 2);
    const oldPending = await delivery(sub, pending, 'pending', daysAgo(40), daysAgo(40), 3);
    // Created long ago, retried by hand and failed again yesterday: kept, and its event with it.
    const retriedLately = await delivery(sub, retried, 'failed', daysAgo(40), daysAgo(1), 1);
    const youngDelivered = await delivery(sub, young, 'delivered', daysAgo(29), daysAgo(29), 1);
    // The sandbox's record of wallet pushes: by sent_at.
    await sql`
      INSERT INTO wallet_pushes (organization_id, push_token_hash, topic, sent_at) VALUES
        ('org-acme', '\\x01', 'pass.dev.loyalty.sandbox', ${daysAgo(31)}),
        ('org-acme', '\\x01', 'pass.dev.loyalty.sandbox', ${daysAgo(29)})`;
    // The request log (issue 29): by created_at, the time the request was received.
    await sql`DELETE FROM request_logs`;
    await sql`
      INSERT INTO request_logs (organization_id, created_at, method, route, status, duration_ms, request_id) VALUES
        ('org-acme', ${daysAgo(31)}, 'GET', '/tags', 200, 3, 'old'),
        ('org-globex', ${daysAgo(30.5)}, 'GET', '/tags', 200, 3, 'old-globex'),
        ('org-acme', ${daysAgo(29)}, 'GET', '/tags', 200, 3, 'young')`;

    const counts = await purgeOldRows(sql, { retentionDays: 30 });

    expect(counts).toEqual({
      events: 2,
      deliveries: 1,
      attempts: 2,
      voucherJobs: 0,
      accessTokens: 0,
      idempotencyKeys: 0,
      workerJobs: 0,
      walletPushes: 1,
      requestLogs: 2,
    });
    expect(await count(sql`SELECT count(*)::int AS n FROM wallet_pushes`)).toBe(1);
    expect((await sql`SELECT request_id FROM request_logs`).map((r) => r.request_id)).toEqual(['young']);
    expect(await ids('events')).toEqual([pending, retried, young].sort());
    expect(await ids('webhook_deliveries')).toEqual([oldPending, retriedLately, youngDelivered].sort());
    expect(await ids('events')).not.toContain(alone);
    expect(await count(sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ${oldDelivered}`)).toBe(
      0,
    );
    expect(await count(sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ${oldPending}`)).toBe(3);
    // A second run finds nothing more.
    expect(Object.values(await purgeOldRows(sql, { retentionDays: 30 })).every((n) => n === 0)).toBe(true);
  });

  it('keeps a pending delivery and its event however old they are', async () => {
    const sub = await subscription();
    const e = await event(daysAgo(3650));
    const d = await delivery(sub, e, 'pending', daysAgo(3650), daysAgo(3650), 7);
    const counts = await purgeOldRows(sql, { retentionDays: 0.0001 });
    expect(counts.events + counts.deliveries + counts.attempts).toBe(0);
    expect(await ids('events')).toEqual([e]);
    expect(await ids('webhook_deliveries')).toEqual([d]);
    // Once it has failed for good, both go.
    await sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ${d}`;
    await sql`UPDATE webhook_deliveries SET updated_at = ${daysAgo(1)} WHERE id = ${d}`;
    expect(await purgeOldRows(sql, { retentionDays: 0.0001 })).toMatchObject({ events: 1, deliveries: 1, attempts: 7 });
  });

  it('works in batches: batchSize 2 over 7 rows, at most maxBatches a run', async () => {
    for (let i = 0; i < 7; i++) await event(daysAgo(40 + i));
    const young = await event(daysAgo(1));
    const statements: string[] = [];
    const spy = new Proxy(sql, {
      apply: (target, self, args) => {
        if (Array.isArray(args[0])) statements.push((args[0] as string[]).join('?'));
        return Reflect.apply(target as never, self, args);
      },
    });
    expect((await purgeOldRows(spy, { retentionDays: 30, batchSize: 2, maxBatches: 2 })).events).toBe(4);
    expect((await ids('events')).length).toBe(4);
    expect(statements.filter((s) => s.includes('DELETE FROM events')).length).toBe(2);
    statements.length = 0;
    expect((await purgeOldRows(spy, { retentionDays: 30, batchSize: 2 })).events).toBe(3);
    // 2 + 1: the batch of one row ends the loop.
    expect(statements.filter((s) => s.includes('DELETE FROM events')).length).toBe(2);
    expect(await ids('events')).toEqual([young]);
  });

  it('deletes access tokens expired for more than a day and expired idempotency keys; live ones stay', async () => {
    const token = async (expiresAt: Date) => {
      const hash = randomBytes(32);
      await sql`INSERT INTO access_tokens (token_hash, client_id, organization_ids, abilities, expires_at)
                VALUES (${hash}, 'acme-admin', ${[ORG]}, '{}', ${expiresAt})`;
      return hash.toString('hex');
    };
    await token(daysAgo(2));
    const justExpired = await token(daysAgo(0.5));
    const live = await token(new Date(Date.now() + 3_600_000));
    const key = async (state: string, expiresAt: Date, lockedUntil: Date | null = null) => {
      const hash = randomBytes(32);
      await sql`INSERT INTO idempotency_keys (scope_hash, request_hash, state, locked_until, expires_at)
                VALUES (${hash}, ${randomBytes(32)}, ${state}, ${lockedUntil}, ${expiresAt})`;
      return hash.toString('hex');
    };
    await key('done', daysAgo(0.01));
    await key('in_progress', daysAgo(0.01), daysAgo(0.02));
    const claimed = await key('in_progress', daysAgo(0.01), new Date(Date.now() + 60_000));
    const liveKey = await key('done', new Date(Date.now() + 3_600_000));

    const counts = await purgeOldRows(sql, { retentionDays: 30 });

    expect(counts).toMatchObject({ accessTokens: 1, idempotencyKeys: 2 });
    const tokens = (await sql<{ h: string }[]>`SELECT encode(token_hash, 'hex') AS h FROM access_tokens`)
      .map((r) => r.h)
      .sort();
    expect(tokens).toEqual([justExpired, live].sort());
    const keys = (await sql<{ h: string }[]>`SELECT encode(scope_hash, 'hex') AS h FROM idempotency_keys`)
      .map((r) => r.h)
      .sort();
    expect(keys).toEqual([claimed, liveKey].sort());
  });

  it('deletes voucher jobs finished before the retention period (with their lanes), never their grants', async () => {
    const [tag] = await sql<{ id: string }[]>`
      INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES (${ORG}, ${BRAND}, 'retention', ${randomUUID()}) RETURNING id`;
    const job = async (status: string, finishedAt: Date | null) => {
      const [row] = await sql<{ id: string }[]>`
        INSERT INTO voucher_jobs (organization_id, brand_id, tag_id, voucher_kind, voucher_id, status, finished_at)
        VALUES (${ORG}, ${BRAND}, ${tag!.id}, 'coupon', ${randomUUID()}, ${status}, ${finishedAt}) RETURNING id`;
      await sql`INSERT INTO voucher_job_lanes (job_id, lane, done) VALUES (${row!.id}, 0, ${status !== 'running'})`;
      return row!.id;
    };
    const oldDone = await job('done', daysAgo(40));
    const oldFailed = await job('failed', daysAgo(31));
    const youngDone = await job('done', daysAgo(1));
    const running = await job('running', null);
    await sql`INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status)
              VALUES (${tag!.id}, 'coupon', 'coupon-welcome', ${randomUUID()}, ${oldDone}, 'issued')`;

    expect((await purgeOldRows(sql, { retentionDays: 30 })).voucherJobs).toBe(2);

    const left = (await sql<{ id: string }[]>`SELECT id FROM voucher_jobs`).map((r) => r.id).sort();
    expect(left).toEqual([youngDone, running].sort());
    expect(
      await count(sql`SELECT count(*)::int AS n FROM voucher_job_lanes WHERE job_id IN (${oldDone}, ${oldFailed})`),
    ).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM voucher_grants WHERE job_id = ${oldDone}`)).toBe(1);
  });

  it('deletes graphile-worker jobs that failed for good before the retention period; others stay', async () => {
    const job = async (attempts: number, maxAttempts: number, updatedAt: Date, locked = false) => {
      const [row] = await sql<{ id: string }[]>`
        SELECT id::text FROM graphile_worker.add_job('retention_test', '{}'::json, max_attempts => ${maxAttempts}, run_at => now() + interval '1 day')`;
      await sql`UPDATE graphile_worker._private_jobs
                SET attempts = ${attempts}, updated_at = ${updatedAt}, last_error = 'boom',
                    locked_at = ${locked ? new Date() : null}, locked_by = ${locked ? 'worker-x' : null}
                WHERE id = ${row!.id}`;
      return row!.id;
    };
    await job(3, 3, daysAgo(40));
    const youngFailure = await job(3, 3, daysAgo(1));
    const waiting = await job(1, 3, daysAgo(40));
    const lastAttemptRunning = await job(3, 3, daysAgo(40), true);

    expect((await purgeOldRows(sql, { retentionDays: 30 })).workerJobs).toBe(1);

    const left = (await sql<{ id: string }[]>`SELECT id::text FROM graphile_worker.jobs`).map((r) => r.id).sort();
    expect(left).toEqual([youngFailure, waiting, lastAttemptRunning].sort());
  });
});

describe('voucher grants go with their tag', () => {
  it('deleting a tag deletes its grants; other tags keep theirs', async () => {
    const tag = async () =>
      (
        await sql<{ id: string }[]>`
      INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES (${ORG}, ${BRAND}, 'grants', ${randomUUID()}) RETURNING id`
      )[0]!.id;
    const doomed = await tag();
    const kept = await tag();
    for (const tagId of [doomed, doomed, kept]) {
      await sql`INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status)
                VALUES (${tagId}, 'coupon', 'coupon-welcome', ${randomUUID()}, ${randomUUID()}, 'issued')`;
    }
    await deleteTag(sql, { organizationIds: [ORG] }, { tag_id: doomed });
    expect(await count(sql`SELECT count(*)::int AS n FROM voucher_grants WHERE tag_id = ${doomed}`)).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM voucher_grants WHERE tag_id = ${kept}`)).toBe(1);
  });

  it('a grant of a tag that does not exist is refused', async () => {
    const insert = sql`INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status)
                       VALUES (${randomUUID()}, 'coupon', 'coupon-welcome', ${randomUUID()}, ${randomUUID()}, 'issued')`;
    await expect(insert).rejects.toMatchObject({ code: '23503' });
  });
});

describe('the prune_old_rows task', () => {
  it('logs one line with the counts when something was deleted, nothing otherwise', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const task = pruneOldRowsTask({ sql, config: { ...loadConfig({}), retentionDays: 30 } });
      await task({}, {} as never);
      expect(errors).not.toHaveBeenCalled();
      await event(daysAgo(40));
      await event(daysAgo(41));
      await task({}, {} as never);
      expect(errors.mock.calls).toEqual([
        [
          'loyalty: retention: purged 2 events, 0 webhook deliveries, 0 webhook attempts, 0 voucher jobs, 0 expired access tokens, 0 expired idempotency keys, 0 failed worker jobs, 0 sandbox wallet pushes, 0 request log entries',
        ],
      ]);
    } finally {
      errors.mockRestore();
    }
  });

  it('describePurge names each kind, singular or plural', () => {
    expect(describePurge(noPurgeCounts())).toBeUndefined();
    expect(
      describePurge({
        events: 1,
        deliveries: 1,
        attempts: 3,
        voucherJobs: 1,
        accessTokens: 1,
        idempotencyKeys: 1,
        workerJobs: 1,
        walletPushes: 1,
        requestLogs: 1,
      }),
    ).toBe(
      'loyalty: retention: purged 1 event, 1 webhook delivery, 3 webhook attempts, 1 voucher job, 1 expired access token, 1 expired idempotency key, 1 failed worker job, 1 sandbox wallet push, 1 request log entry',
    );
  });

  it('is queued by the worker at start and again while it runs', async () => {
    const config: Config = { ...loadConfig({}), retentionDays: 0.0001 }; // 8.6 s: queued every ~2 s
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const runner = await startWorker({
      connectionString: db.url,
      sql,
      config,
      only: ['prune_old_rows'],
      pollInterval: 100,
    });
    try {
      await event(daysAgo(1));
      await expect.poll(async () => (await ids('events')).length, { timeout: 10_000, interval: 100 }).toBe(0);
      // A second event, written after the first run: gone by a later run of the timer.
      await event(daysAgo(1));
      await expect.poll(async () => (await ids('events')).length, { timeout: 10_000, interval: 100 }).toBe(0);
      expect(errors.mock.calls.some(([line]) => String(line).startsWith('loyalty: retention: purged 1 event,'))).toBe(
        true,
      );
    } finally {
      await runner.stop();
      errors.mockRestore();
    }
  });
});
