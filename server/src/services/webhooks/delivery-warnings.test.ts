import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { emitMemberCreated, subscribeWebhook, useWebhookTestBed } from '#test-helpers/webhook-receiver.js';
import type { Config } from '../../config.js';
import type { Schemas } from '../../lib/schemas.js';
import { startWorker } from '../../worker.js';
import type { DeliveryAttemptRecord } from './deliveries.js';
import { urlIdentifier } from './delivery-warnings.js';

/**
 * Issue 29, item 3, against real PostgreSQL, the real worker and a real receiver on 127.0.0.1:
 * `webhook_subscription.failing` once per failing streak, `webhook_delivery.exhausted` on a
 * delivery's last attempt only, never delivered to the subscription they are about, and never
 * seen by another organization.
 */

type Received = { path: string; type: string; body: Record<string, unknown> };

let t: TestServer;
let base: string;
const received: Received[] = [];
/** The status each path answers (200 when unset). */
const statuses = new Map<string, number>();

const { run } = useWebhookTestBed(
  (req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      received.push({ path, type: String(body.type), body });
      const status = statuses.get(path) ?? 200;
      res.writeHead(status).end(`status ${status}`);
    });
  },
  (bed) => {
    t = bed.t;
    base = bed.receiver.base;
  },
);

/** What the worker logs of each attempt. */
const attemptRecords: DeliveryAttemptRecord[] = [];

beforeEach(() => {
  attemptRecords.length = 0;
  received.length = 0;
  statuses.clear();
});

type Warning = Schemas['WebhookSubscriptionFailingEvent'] | Schemas['WebhookDeliveryExhaustedEvent'];

const FAST_RETRIES = [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05];

const workerOf = (overrides: Partial<Config>) =>
  startWorker({
    connectionString: t.db.url,
    sql: t.db.sql,
    config: { ...t.config, webhookRetryDelays: FAST_RETRIES, webhookTimeoutMs: 5000, ...overrides },
    concurrency: 8,
    pollInterval: 50,
    tasks: { onDeliveryAttempt: (a) => attemptRecords.push(a) },
  });
const work = (overrides: Partial<Config> = {}) => run(() => workerOf(overrides));

const WARNINGS = ['webhook_subscription.failing', 'webhook_delivery.exhausted'];
const subscribe = (path: string, events: string[], client = 'acme-admin') =>
  subscribeWebhook(t, `${base}${path}`, events, client);
const heard = (path: string, type: string) =>
  received.filter((r) => r.path === path && r.type === type).map((r) => r.body as unknown as Warning);
/** The recorded events of a type about these subscriptions (the events of the tests before stay). */
const recorded = async (type: string, ...subscriptionIds: string[]) =>
  t.db.sql<{ organization_id: string; data: Record<string, unknown> }[]>`
    SELECT organization_id, data FROM events
    WHERE type = ${type} AND data->>'subscription_id' = ANY(${subscriptionIds}::text[])
    ORDER BY created_at, id`;
const subscriptionState = async (id: string) =>
  (
    await t.db.sql<{ consecutive_failures: number; active: boolean }[]>`
    SELECT consecutive_failures, active FROM webhook_subscriptions WHERE id = ${id}`
  )[0];
const failedDeliveries = async (id: string) =>
  (
    await t.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ${id} AND status = 'failed'`
  )[0]?.n ?? 0;
/** No pending delivery left anywhere (the warnings' own deliveries included). */
const settled = async () =>
  (await t.db.sql`SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT 1`).length === 0;

/**
 * A member.created subscription of `path` whose receiver answers 400, under a worker with `config`:
 * returned after its first failure and `waitMs` more (its failing streak that much older).
 */
async function failingFor(path: string, config: Partial<Config>, waitMs: number) {
  const sub = await subscribe(path, ['member.created']);
  statuses.set(path, 400);
  await work(config);
  await emitMemberCreated(t);
  await until(async () => (await subscriptionState(sub.id))?.consecutive_failures === 1);
  await new Promise((r) => setTimeout(r, waitMs));
  return sub;
}

describe('webhook_subscription.failing', () => {
  it('is sent once when the failed deliveries in a row reach the threshold, and again only after a success', async () => {
    const watcher = await subscribe('/watch', WARNINGS);
    // The failing subscription listens to the warnings too: it never hears of itself.
    const bad = await subscribe('/bad', ['member.created', ...WARNINGS]);
    statuses.set('/bad', 400); // final at once: each delivery ends failed after one attempt
    await work({ webhookFailingAfter: 3, webhookDisableAfterFailures: 6, webhookDisableAfterSeconds: 0 });

    await emitMemberCreated(t, 2);
    await until(async () => (await subscriptionState(bad.id))?.consecutive_failures === 2);
    expect(await recorded('webhook_subscription.failing', bad.id)).toEqual([]);
    await emitMemberCreated(t, 2);
    const [warning] = await until(
      () =>
        heard('/watch', 'webhook_subscription.failing').length > 0 && heard('/watch', 'webhook_subscription.failing'),
    );
    await until(async () => (await subscriptionState(bad.id))?.consecutive_failures === 4);
    await until(settled);
    expect(warning).toMatchObject({
      type: 'webhook_subscription.failing',
      organization_id: 'org-acme',
      data: {
        subscription_id: bad.id,
        url: `${base}/bad`,
        consecutive_failures: 3,
        disable_after: 6,
        last_status: 400,
        last_error: 'http_status',
        first_failure_at: expect.any(String),
      },
    });
    expect(heard('/watch', 'webhook_subscription.failing')).toHaveLength(1); // not on the 4th failure
    // The worker's log line of the attempt that raised it says so.
    expect(attemptRecords.filter((a) => a.warnings)).toEqual([
      expect.objectContaining({ subscription_id: bad.id, warnings: ['webhook_subscription.failing'] }),
    ]);
    expect(await recorded('webhook_subscription.failing', bad.id)).toHaveLength(1);
    expect(received.filter((r) => r.path === '/bad').map((r) => r.type)).toEqual(Array(4).fill('member.created'));

    // A delivered attempt starts the streak over; the next streak warns again, once.
    statuses.set('/bad', 200);
    await emitMemberCreated(t);
    await until(async () => (await subscriptionState(bad.id))?.consecutive_failures === 0);
    statuses.set('/bad', 400);
    await emitMemberCreated(t, 4);
    await until(() => heard('/watch', 'webhook_subscription.failing').length === 2);
    await until(async () => (await subscriptionState(bad.id))?.consecutive_failures === 4);
    await until(settled);
    expect(await recorded('webhook_subscription.failing', bad.id)).toHaveLength(2);
    expect((await subscriptionState(bad.id))?.active).toBe(true);
    expect(received.filter((r) => r.path === '/bad' && r.type !== 'member.created')).toEqual([]);
    expect(watcher.id).not.toBe(bad.id);
  });

  it('is sent exactly once when several lanes and two workers record failures at the same time', async () => {
    await subscribe('/watch', ['webhook_subscription.failing']);
    const bad = await subscribe('/crowd', ['member.created']);
    statuses.set('/crowd', 400);
    const overrides = {
      webhookFailingAfter: 5,
      webhookDisableAfterFailures: 0,
      webhookDisableAfterSeconds: 0,
      webhookConcurrencyPerSubscription: 4,
    };
    const second = await workerOf(overrides);
    try {
      await work(overrides);
      await emitMemberCreated(t, 40);
      await until(async () => (await failedDeliveries(bad.id)) === 40, 15_000);
      await until(settled);
    } finally {
      await second.stop();
    }
    expect((await subscriptionState(bad.id))?.consecutive_failures).toBe(40);
    expect(await recorded('webhook_subscription.failing', bad.id)).toHaveLength(1);
    expect(heard('/watch', 'webhook_subscription.failing')).toHaveLength(1);
    expect(heard('/watch', 'webhook_subscription.failing')[0]?.data).toMatchObject({ consecutive_failures: 5 });
  });

  it('warns a quiet subscription once it has failed for a tenth of the disable time, below the count', async () => {
    await subscribe('/watch', ['webhook_subscription.failing']);
    // Disabled after 30 s of failing: warned after 3 s, though far from 10 failures in a row.
    const quiet = await failingFor(
      '/quiet',
      { webhookFailingAfter: 10, webhookDisableAfterFailures: 100, webhookDisableAfterSeconds: 30 },
      3200,
    );
    expect(await recorded('webhook_subscription.failing', quiet.id)).toEqual([]);
    await emitMemberCreated(t);
    const [warning] = await until(
      () =>
        heard('/watch', 'webhook_subscription.failing').length > 0 && heard('/watch', 'webhook_subscription.failing'),
    );
    expect(warning?.data).toMatchObject({ subscription_id: quiet.id, consecutive_failures: 2, disable_after: 100 });
    // Once per streak: the failures after it, by count or by time, do not warn again.
    await emitMemberCreated(t);
    await until(async () => (await subscriptionState(quiet.id))?.consecutive_failures === 3);
    await until(settled);
    expect(await recorded('webhook_subscription.failing', quiet.id)).toHaveLength(1);
    expect((await subscriptionState(quiet.id))?.active).toBe(true);
  });

  it('is not sent by the attempt that disables the subscription: the disabled event says it', async () => {
    await subscribe('/watch', ['webhook_subscription.failing', 'webhook_subscription.disabled']);
    // The second failure comes after both the warning's time (0.2 s) and the disable time (2 s).
    const late = await failingFor(
      '/late',
      { webhookFailingAfter: 10, webhookDisableAfterFailures: 100, webhookDisableAfterSeconds: 2 },
      2200,
    );
    await emitMemberCreated(t);
    await until(() => heard('/watch', 'webhook_subscription.disabled').length === 1);
    await until(settled);
    expect(heard('/watch', 'webhook_subscription.disabled')[0]?.data).toMatchObject({
      subscription_id: late.id,
      reason: 'failing_too_long',
    });
    expect(await recorded('webhook_subscription.failing', late.id)).toEqual([]);
  });

  it('is never seen by another organization', async () => {
    await subscribe('/globex-watch', WARNINGS, 'globex-admin');
    const acmeWatcher = await subscribe('/acme-watch', WARNINGS);
    const bad = await subscribe('/acme-bad', ['member.created']);
    statuses.set('/acme-bad', 400);
    await work({ webhookFailingAfter: 1, webhookDisableAfterFailures: 0, webhookDisableAfterSeconds: 0 });
    await emitMemberCreated(t);
    await until(() => heard('/acme-watch', 'webhook_subscription.failing').length === 1);
    await until(settled);
    expect(received.filter((r) => r.path === '/globex-watch')).toEqual([]);
    const globexEvents = await t.inject({ method: 'GET', url: '/events', headers: await t.auth('globex-admin') });
    expect(globexEvents.statusCode).toBe(200);
    expect(globexEvents.payload).not.toContain(bad.id);
    expect(acmeWatcher.id).not.toBe(bad.id);
  });
});

describe('webhook_delivery.exhausted', () => {
  it('is sent when a delivery used its last attempt, not before, and not for a final 4xx', async () => {
    await subscribe('/watch', ['webhook_delivery.exhausted']);
    const down = await subscribe('/down', ['member.created', ...WARNINGS]);
    statuses.set('/down', 503);
    await work({ webhookFailingAfter: 0, webhookDisableAfterFailures: 0, webhookDisableAfterSeconds: 0 });
    const [eventId] = await emitMemberCreated(t);
    const [exhausted] = await until(
      () => heard('/watch', 'webhook_delivery.exhausted').length > 0 && heard('/watch', 'webhook_delivery.exhausted'),
    );
    const [delivery] = await t.db.sql<
      { id: string }[]
    >`SELECT id FROM webhook_deliveries WHERE subscription_id = ${down.id}`;
    expect(exhausted).toMatchObject({
      type: 'webhook_delivery.exhausted',
      organization_id: 'org-acme',
      data: {
        delivery_id: delivery?.id,
        subscription_id: down.id,
        event_id: eventId,
        event_type: 'member.created',
        attempts: 8,
        last_status: 503,
        last_error: 'http_status',
      },
    });
    // Raised by the 8th attempt alone: the 7 before it raised nothing.
    expect(attemptRecords.filter((a) => a.delivery_id === delivery?.id).map((a) => a.warnings)).toEqual([
      ...Array(7).fill(undefined),
      ['webhook_delivery.exhausted'],
    ]);
    // A final 4xx ends a delivery at its first attempt: failed, not exhausted.
    statuses.set('/down', 404);
    await emitMemberCreated(t);
    await until(async () => (await failedDeliveries(down.id)) === 2);
    await until(settled);
    expect(await recorded('webhook_delivery.exhausted', down.id)).toHaveLength(1);
    expect(received.filter((r) => r.path === '/down').map((r) => r.type)).toEqual(Array(9).fill('member.created'));
  });

  it('two failing receivers do not notify each other forever', async () => {
    const a = await subscribe('/a', ['member.created', 'webhook_delivery.exhausted']);
    const b = await subscribe('/b', ['member.created', 'webhook_delivery.exhausted']);
    statuses.set('/a', 503);
    statuses.set('/b', 503);
    await work({ webhookFailingAfter: 0, webhookDisableAfterFailures: 0, webhookDisableAfterSeconds: 0 });
    await emitMemberCreated(t);
    // Each exhausts the member.created delivery (2 events), then the other's exhausted event's
    // delivery exhausts too, and that raises nothing more.
    await until(async () => (await failedDeliveries(a.id)) === 2 && (await failedDeliveries(b.id)) === 2, 15_000);
    await until(settled);
    const events = await recorded('webhook_delivery.exhausted', a.id, b.id);
    expect(events.map((e) => e.data.subscription_id).sort()).toEqual([a.id, b.id].sort());
    expect(heard('/a', 'webhook_delivery.exhausted').map((e) => e.data.subscription_id)).toEqual(Array(8).fill(b.id));
    expect(heard('/b', 'webhook_delivery.exhausted').map((e) => e.data.subscription_id)).toEqual(Array(8).fill(a.id));
  });
});

describe('subscribing', () => {
  it('create and PATCH accept both types; GET /webhook-event-types lists them as subscribable', async () => {
    const sub = await subscribe('/any', ['webhook_subscription.failing']);
    const headers = await t.auth('acme-admin');
    const patched = await t.inject({
      method: 'PATCH',
      url: `/webhook-subscriptions/${sub.id}`,
      payload: { events: ['webhook_delivery.exhausted', 'webhook_subscription.failing'] },
      headers,
    });
    expect(patched.statusCode, patched.payload).toBe(200);
    expect((patched.result as Schemas['WebhookSubscriptionResponse']).data.events).toEqual(WARNINGS.toReversed());
    const typo = await t.inject({
      method: 'PATCH',
      url: `/webhook-subscriptions/${sub.id}`,
      payload: { events: ['webhook_delivery.failing'] },
      headers,
    });
    expect(typo.statusCode).toBe(422);
    expect(typo.payload).toContain('events');
    const catalogue = await t.inject({ method: 'GET', url: '/webhook-event-types', headers });
    const entries = (catalogue.result as Schemas['WebhookEventTypeListResponse']).data;
    for (const type of WARNINGS)
      expect(entries.find((e) => e.type === type)).toMatchObject({ subscribable: true, summary: expect.any(String) });
  });
});

describe('the url of webhook_subscription.failing', () => {
  it('keeps scheme, host, port and path; drops the query string, fragment and user info', () => {
    expect(urlIdentifier('https://user:pass@crm.example.com:8443/hooks/loyalty?token=s3cret#x')).toBe(
      'https://crm.example.com:8443/hooks/loyalty',
    );
    expect(urlIdentifier('https://crm.example.com')).toBe('https://crm.example.com/');
  });
});

// Last in the file: it moves acme's sandbox clock 7 days ahead (cached tokens of acme expire).
describe('migration 0049', () => {
  it('marks the streaks in progress that were warned of already, and no others', async () => {
    const [warned, oldStreak, healthy] = [
      await subscribe('/m-warned', ['member.created']),
      await subscribe('/m-old', ['member.created']),
      await subscribe('/m-healthy', ['member.created']),
    ];
    await t.db.sql`UPDATE webhook_subscriptions SET failing_since = now() - interval '1 hour', consecutive_failures = 12
                   WHERE id IN (${warned.id}, ${oldStreak.id})`;
    // A warning of this streak (30 min ago), of an earlier streak (2 h ago), and of a healthy one.
    for (const [id, ago] of [
      [warned.id, '30 minutes'],
      [oldStreak.id, '2 hours'],
      [healthy.id, '10 minutes'],
    ] as const) {
      await t.db.sql`
        INSERT INTO events (organization_id, type, data, created_at)
        VALUES ('org-acme', 'webhook_subscription.failing', ${t.db.sql.json({ subscription_id: id })}, now() - ${ago}::interval)`;
    }
    // The migration itself, on this database: the column goes, and comes back filled.
    await t.db.sql`ALTER TABLE webhook_subscriptions DROP COLUMN failing_warned_at`;
    await t.db.sql.unsafe(
      readFileSync(path.join(import.meta.dirname, '../../../migrations/0049_failing_warned_at.sql'), 'utf8'),
    );
    const rows = await t.db.sql<{ id: string; warned: boolean }[]>`
      SELECT id, failing_warned_at IS NOT NULL AS warned FROM webhook_subscriptions
      WHERE id IN (${warned.id}, ${oldStreak.id}, ${healthy.id})`;
    expect(Object.fromEntries(rows.map((r) => [r.id, r.warned]))).toEqual({
      [warned.id]: true,
      [oldStreak.id]: false,
      [healthy.id]: false,
    });
  });
});

describe('with the specification’s retry schedule', () => {
  it('the sandbox clock moves a delivery through its 8 attempts to webhook_delivery.exhausted', async () => {
    await subscribe('/watch', ['webhook_delivery.exhausted']);
    const slow = await subscribe('/slow', ['member.created']);
    statuses.set('/slow', 503);
    await work({
      webhookRetryDelays: [30, 60, 600, 3600, 10800, 21600, 86400],
      webhookFailingAfter: 0,
      webhookDisableAfterFailures: 0,
      webhookDisableAfterSeconds: 0,
    });
    await emitMemberCreated(t);
    for (let attempt = 1; attempt < 8; attempt++) {
      await until(() => received.filter((r) => r.path === '/slow').length === attempt);
      expect(heard('/watch', 'webhook_delivery.exhausted')).toEqual([]);
      const moved = await t.inject({
        method: 'POST',
        url: '/sandbox/clock',
        payload: { advance: '1d' },
        headers: { authorization: `Bearer ${await t.newToken('acme-admin')}` },
      });
      expect(moved.statusCode, moved.payload).toBe(200);
    }
    const [exhausted] = await until(
      () => heard('/watch', 'webhook_delivery.exhausted').length > 0 && heard('/watch', 'webhook_delivery.exhausted'),
    );
    expect(exhausted?.data).toMatchObject({ subscription_id: slow.id, attempts: 8, last_status: 503 });
    expect(received.filter((r) => r.path === '/slow')).toHaveLength(8);
  });
});
