import { createHmac } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { beforeEach, describe, expect, it } from 'vitest';
import { webhookHeaderProblems } from '#test-helpers/contract.js';
import type { TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { emitMemberCreated, subscribeWebhook, useWebhookTestBed } from '#test-helpers/webhook-receiver.js';
import type { Config } from '../../config.js';
import type { Schemas } from '../../lib/schemas.js';
import { startWorker } from '../../worker.js';
import type { DeliveryAttemptRecord } from './deliveries.js';

/**
 * Issue 15 against real PostgreSQL, the real worker and a real receiver on 127.0.0.1: one
 * subscription read and changed, disabling by hand and automatically (410, failing too long, too
 * many failures) with the webhook_subscription.disabled event, parked deliveries, recovery, test
 * pings, the redirect's Location in the log and next_attempt_reason.
 */

const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as (
  ajv: Ajv2020,
) => void;

type Received = { path: string; headers: IncomingHttpHeaders; body: string };
type Behaviour = (req: Received, res: ServerResponse) => void;

let t: TestServer;
let base: string;
const received: Received[] = [];
const behaviours = new Map<string, Behaviour>();

const { run } = useWebhookTestBed(
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      (behaviours.get(r.path) ?? ((_r, out) => out.writeHead(200).end('ok')))(r, res);
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
  behaviours.clear();
});

const answer =
  (status: number, headers: Record<string, string> = {}): Behaviour =>
  (_r, res) =>
    res.writeHead(status, headers).end(`status ${status}`);

async function work(overrides: Partial<Config> = {}) {
  const config: Config = {
    ...t.config,
    webhookRetryDelays: [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3],
    webhookTimeoutMs: 5000,
    ...overrides,
  };
  await run(() =>
    startWorker({
      connectionString: t.db.url,
      sql: t.db.sql,
      config,
      concurrency: 8,
      pollInterval: 50,
      tasks: { onDeliveryAttempt: (a) => attemptRecords.push(a) },
    }),
  );
}

const subscribe = (path: string, events?: string[]) => subscribeWebhook(t, `${base}${path}`, events);
const requestsTo = (path: string) => received.filter((r) => r.path === path);

const emit = (n = 1) => emitMemberCreated(t, n);

async function api(method: string, url: string, payload?: unknown, client = 'acme-admin') {
  return t.inject({ method, url, payload: payload as object, headers: await t.auth(client) });
}
const getSubscription = async (id: string) =>
  ((await api('GET', `/webhook-subscriptions/${id}`)).result as Schemas['WebhookSubscriptionResponse']).data;
const logOf = async (id: string) =>
  ((await api('GET', `/webhook-subscriptions/${id}/deliveries`)).result as Schemas['WebhookDeliveryListResponse']).data;
const deliveryStatuses = async (id: string) =>
  (await t.db.sql<{ status: string }[]>`SELECT status FROM webhook_deliveries WHERE subscription_id = ${id}`).map(
    (r) => r.status,
  );

/** What another subscription of the organization heard: the webhook_subscription.disabled events. */
const disabledEvents = (path: string) =>
  requestsTo(path).map((r) => JSON.parse(r.body) as Schemas['WebhookSubscriptionDisabledEvent']);

describe('GET and PATCH /webhook-subscriptions/{id}', () => {
  it('reads one subscription with its state, never the secret; 404 for unknown, foreign and malformed ids', async () => {
    const sub = await subscribe('/read');
    const res = await api('GET', `/webhook-subscriptions/${sub.id}`);
    expect(res.statusCode).toBe(200);
    const data = (res.result as Schemas['WebhookSubscriptionResponse']).data;
    expect(data).toMatchObject({
      id: sub.id,
      url: `${base}/read`,
      active: true,
      description: null,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      consecutive_failures: 0,
    });
    expect(res.payload).not.toContain(sub.secret);
    expect(res.payload).not.toContain('secret');
    expect((await api('GET', `/webhook-subscriptions/${crypto.randomUUID()}`)).statusCode).toBe(404);
    const malformed = await api('GET', '/webhook-subscriptions/not-a-uuid');
    expect(malformed.statusCode).toBe(422);
    expect(malformed.payload).toContain('id');
    expect((await api('GET', `/webhook-subscriptions/${sub.id}`, undefined, 'globex-admin')).statusCode).toBe(404);
    expect((await api('PATCH', `/webhook-subscriptions/${sub.id}`, { active: false }, 'globex-admin')).statusCode).toBe(
      404,
    );
  });

  it('changes url, events and description; refuses bad input with 422 naming the field and changes nothing', async () => {
    const sub = await subscribe('/edit');
    const res = await api('PATCH', `/webhook-subscriptions/${sub.id}`, {
      url: `${base}/edited`,
      events: ['coupon.issued', 'coupon.issued', 'webhook_subscription.disabled'],
      description: 'CRM sync',
    });
    expect(res.statusCode, res.payload).toBe(200);
    expect((res.result as Schemas['WebhookSubscriptionResponse']).data).toMatchObject({
      url: `${base}/edited`,
      events: ['coupon.issued', 'webhook_subscription.disabled'],
      description: 'CRM sync',
      active: true,
    });
    const cases: [unknown, string][] = [
      [{ url: 'ftp://example.com/hook' }, 'url'],
      [{ events: [] }, 'events'],
      [{ events: ['ping'] }, 'events'],
      [{ events: ['member.deleted'] }, 'events'],
      [{ active: 'no' }, 'active'],
      [{ description: 'x'.repeat(501) }, 'description'],
      [{ secret: 'whsec_mine' }, 'secret'],
    ];
    for (const [payload, field] of cases) {
      const bad = await api('PATCH', `/webhook-subscriptions/${sub.id}`, payload);
      expect(bad.statusCode, JSON.stringify(payload)).toBe(422);
      expect(bad.payload, JSON.stringify(payload)).toContain(field);
    }
    expect((await api('PATCH', `/webhook-subscriptions/${sub.id}`, {})).statusCode).toBe(422);
    expect(await getSubscription(sub.id)).toMatchObject({ url: `${base}/edited`, description: 'CRM sync' });
    const cleared = await api('PATCH', `/webhook-subscriptions/${sub.id}`, { description: null });
    expect((cleared.result as Schemas['WebhookSubscriptionResponse']).data.description).toBeNull();
  });

  it('disabling parks pending deliveries and announces it; enabling sends them, and events meanwhile are not delivered', async () => {
    const watcher = await subscribe('/watch', ['webhook_subscription.disabled']);
    const sub = await subscribe('/parked');
    behaviours.set('/parked', answer(503));
    await work();
    const [first] = await emit();
    await until(() => requestsTo('/parked').length >= 1);
    const off = await api('PATCH', `/webhook-subscriptions/${sub.id}`, { active: false });
    expect((off.result as Schemas['WebhookSubscriptionResponse']).data).toMatchObject({
      active: false,
      disabled_reason: 'manual',
    });
    const [event] = await until(() => disabledEvents('/watch').length >= 1 && disabledEvents('/watch'));
    expect(event!.data).toMatchObject({ subscription_id: sub.id, reason: 'manual' });
    expect(event!.organization_id).toBe('org-acme');
    behaviours.set('/parked', answer(200));
    await emit(); // while disabled: no delivery
    const sent = requestsTo('/parked').length;
    await new Promise((r) => setTimeout(r, 1200)); // past several retry delays
    expect(requestsTo('/parked').length).toBe(sent);
    const [parked] = await logOf(sub.id);
    expect(parked).toMatchObject({ event_id: first, status: 'pending' });
    expect(parked!.next_attempt_reason).toMatch(/^Parked: the subscription is disabled \(manual\)/);

    const on = await api('PATCH', `/webhook-subscriptions/${sub.id}`, { active: true });
    expect((on.result as Schemas['WebhookSubscriptionResponse']).data).toMatchObject({
      active: true,
      disabled_reason: null,
      disabled_at: null,
    });
    await until(async () => (await deliveryStatuses(sub.id)).join() === 'delivered');
    expect(requestsTo('/parked').every((r) => JSON.parse(r.body).id === first)).toBe(true);
    expect((await getSubscription(sub.id)).consecutive_failures).toBe(0);
    expect(watcher.id).not.toBe(sub.id);
  });
});

describe('automatic disabling', () => {
  it('a 410 Gone disables at once (endpoint_gone), and the other subscriptions hear of it', async () => {
    await subscribe('/watch', ['webhook_subscription.disabled']);
    const sub = await subscribe('/gone');
    behaviours.set('/gone', answer(410));
    await work();
    await emit();
    const [event] = await until(() => disabledEvents('/watch').length >= 1 && disabledEvents('/watch'));
    expect(event!.data).toMatchObject({ subscription_id: sub.id, reason: 'endpoint_gone' });
    const state = await getSubscription(sub.id);
    expect(state).toMatchObject({ active: false, disabled_reason: 'endpoint_gone', consecutive_failures: 1 });
    expect(state.disabled_at).toBe(event!.data.disabled_at);
    await emit();
    await new Promise((r) => setTimeout(r, 500));
    expect(requestsTo('/gone')).toHaveLength(1);
    expect(requestsTo('/watch')).toHaveLength(1); // announced once
    // The worker's log line of the attempt says it disabled the subscription, and why.
    expect(attemptRecords.filter((a) => a.subscription_disabled)).toEqual([
      expect.objectContaining({ subscription_id: sub.id, status_code: 410, subscription_disabled: 'endpoint_gone' }),
    ]);
  });

  it('too_many_failures after N deliveries in a row ended failed; a success in between starts the count over', async () => {
    const sub = await subscribe('/bad');
    behaviours.set('/bad', answer(400)); // final at once
    await work({ webhookDisableAfterFailures: 3, webhookDisableAfterSeconds: 0 });
    await emit(2);
    await until(async () => (await getSubscription(sub.id)).consecutive_failures === 2);
    behaviours.set('/bad', answer(200));
    await emit();
    await until(async () => (await getSubscription(sub.id)).consecutive_failures === 0);
    expect((await getSubscription(sub.id)).failing_since).toBeNull();
    behaviours.set('/bad', answer(400));
    await emit(2);
    await until(async () => (await getSubscription(sub.id)).consecutive_failures === 2);
    expect((await getSubscription(sub.id)).active).toBe(true);
    await emit();
    const state = await until(async () => {
      const s = await getSubscription(sub.id);
      return !s.active && s;
    });
    expect(state).toMatchObject({ disabled_reason: 'too_many_failures', consecutive_failures: 3 });
  });

  it('failing_too_long when every attempt failed for the configured time (retries keep the spec schedule)', async () => {
    const sub = await subscribe('/down');
    behaviours.set('/down', answer(503));
    await work({ webhookDisableAfterSeconds: 1, webhookDisableAfterFailures: 0 });
    await emit();
    const state = await until(async () => {
      const s = await getSubscription(sub.id);
      return !s.active && s;
    });
    expect(state.disabled_reason).toBe('failing_too_long');
    expect(state.consecutive_failures).toBe(0); // the delivery itself is still pending (parked)
    expect(Date.parse(state.disabled_at!) - Date.parse(state.failing_since!)).toBeGreaterThanOrEqual(1000);
    expect(await deliveryStatuses(sub.id)).toEqual(['pending']);
  });
});

describe('delivery log', () => {
  it('records where a redirect pointed, and why the next attempt is due', async () => {
    const sub = await subscribe('/moved');
    behaviours.set('/moved', answer(302, { location: 'https://elsewhere.test/new-home' }));
    await work({ webhookRetryDelays: [60, 60, 60, 60, 60, 60, 60] });
    await emit();
    const [entry] = await until(async () => {
      const log = await logOf(sub.id);
      return log[0]?.attempts.length === 1 && log;
    });
    expect(entry!.attempts[0]).toMatchObject({
      status_code: 302,
      error: 'redirect_not_followed',
      response_snippet: 'Location: https://elsewhere.test/new-home',
    });
    expect(entry!.next_attempt_reason).toBe(
      'Attempt 1 got HTTP 302 redirect, not followed; retry 1 of 7 on the schedule.',
    );
    expect(Date.parse(entry!.next_attempt_at!) - Date.now()).toBeGreaterThan(50_000);
    expect(requestsTo('/new-home')).toHaveLength(0);
  });
});

describe('POST /webhook-subscriptions/{id}/recover', () => {
  it('re-queues the deliveries that ended failed in the window, in event order, same message ids, one more attempt each', async () => {
    const sub = await subscribe('/recover');
    behaviours.set('/recover', answer(400));
    await work({ webhookDisableAfterFailures: 0 });
    const since = new Date(Date.now() - 1000).toISOString();
    const ids = await emit(3);
    await until(async () => (await deliveryStatuses(sub.id)).filter((s) => s === 'failed').length === 3);
    expect(requestsTo('/recover')).toHaveLength(3);
    behaviours.set('/recover', answer(200));

    const past = await api('POST', `/webhook-subscriptions/${sub.id}/recover`, {
      since: '2020-01-01T00:00:00Z',
      until: since,
    });
    expect(past.statusCode).toBe(202);
    expect((past.result as Schemas['WebhookDeliveriesRecovered']).data.recovered).toBe(0);
    const bad = await api('POST', `/webhook-subscriptions/${sub.id}/recover`, { since, until: since });
    expect(bad.statusCode).toBe(422);
    expect(bad.payload).toContain('until');
    expect((await api('POST', `/webhook-subscriptions/${sub.id}/recover`, { since: 'yesterday' })).statusCode).toBe(
      422,
    );
    expect((await api('POST', `/webhook-subscriptions/${sub.id}/recover`, {})).statusCode).toBe(422);

    const res = await api('POST', `/webhook-subscriptions/${sub.id}/recover`, { since });
    expect(res.statusCode, res.payload).toBe(202);
    expect((res.result as Schemas['WebhookDeliveriesRecovered']).data).toMatchObject({
      id: sub.id,
      recovered: 3,
      since,
      active: true,
    });
    await until(async () => (await deliveryStatuses(sub.id)).every((s) => s === 'delivered'));
    const resent = requestsTo('/recover').slice(3);
    expect(resent.map((r) => r.headers['loyalty-message-id']).sort()).toEqual([...ids].sort());
    expect(resent.map((r) => r.headers['loyalty-attempt'])).toEqual(['2', '2', '2']);
    const again = await api('POST', `/webhook-subscriptions/${sub.id}/recover`, { since });
    expect((again.result as Schemas['WebhookDeliveriesRecovered']).data.recovered).toBe(0);
  });

  it('sends recovered deliveries in event order when one lane sends', async () => {
    const sub = await subscribe('/ordered');
    behaviours.set('/ordered', answer(400));
    await work({ webhookDisableAfterFailures: 0, webhookConcurrencyPerSubscription: 1 });
    const since = new Date(Date.now() - 1000).toISOString();
    const ids = await emit(5);
    await until(async () => (await deliveryStatuses(sub.id)).filter((s) => s === 'failed').length === 5);
    behaviours.set('/ordered', answer(200));
    await api('POST', `/webhook-subscriptions/${sub.id}/recover`, { since });
    await until(() => requestsTo('/ordered').length >= 10);
    expect(
      requestsTo('/ordered')
        .slice(5)
        .map((r) => r.headers['loyalty-message-id']),
    ).toEqual(ids);
  });
});

describe('POST /webhook-subscriptions/{id}/test', () => {
  it('sends one signed ping to that subscription only and answers its outcome; nothing is recorded', async () => {
    const sub = await subscribe('/ping');
    const other = await subscribe('/other');
    const eventsBefore = (await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events`)[0]!.n;
    const res = await api('POST', `/webhook-subscriptions/${sub.id}/test`);
    expect(res.statusCode, res.payload).toBe(200);
    const data = (res.result as Schemas['WebhookTestResponse']).data;
    expect(data).toMatchObject({ outcome: 'delivered', status_code: 200, error: null, response_snippet: 'ok' });
    const [req] = requestsTo('/ping');
    const body = JSON.parse(req!.body) as Schemas['PingEvent'];
    expect(body).toMatchObject({
      id: data.event_id,
      type: 'ping',
      organization_id: 'org-acme',
      data: { subscription_id: sub.id },
    });
    expect(req!.headers['loyalty-event']).toBe('ping');
    // A receiver that validates the headers against the document accepts the test event (issue 29).
    expect(webhookHeaderProblems('ping', req!.headers)).toEqual([]);
    expect(req!.headers['loyalty-attempt']).toBe('1');
    expect(req!.headers['loyalty-signature']).toBe(
      createHmac('sha256', Buffer.from(sub.secret, 'utf8')).update(req!.body).digest('hex'),
    );
    expect(requestsTo('/other')).toHaveLength(0);
    expect((await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events`)[0]!.n).toBe(eventsBefore);
    expect(await deliveryStatuses(sub.id)).toEqual([]);
    expect(other.id).not.toBe(sub.id);
  });

  it('reports a failing receiver without counting it, and tests a disabled subscription', async () => {
    const sub = await subscribe('/ping-fails');
    behaviours.set('/ping-fails', answer(500));
    await api('PATCH', `/webhook-subscriptions/${sub.id}`, { active: false });
    const res = await api('POST', `/webhook-subscriptions/${sub.id}/test`);
    expect((res.result as Schemas['WebhookTestResponse']).data).toMatchObject({
      outcome: 'failed',
      status_code: 500,
      error: 'http_status',
      response_snippet: 'status 500',
    });
    expect(await getSubscription(sub.id)).toMatchObject({ consecutive_failures: 0, failing_since: null });
    expect((await api('POST', `/webhook-subscriptions/${crypto.randomUUID()}/test`)).statusCode).toBe(404);
    expect((await api('POST', `/webhook-subscriptions/${sub.id}/test`, undefined, 'globex-admin')).statusCode).toBe(
      404,
    );
  });
});

describe('GET /webhook-event-types', () => {
  it('lists every type of the webhooks section with a standalone JSON Schema that accepts its example', async () => {
    const res = await api('GET', '/webhook-event-types');
    expect(res.statusCode).toBe(200);
    const types = (res.result as Schemas['WebhookEventTypeListResponse']).data;
    expect(types.map((e) => e.type)).toEqual([
      'member.created',
      'points.changed',
      'coupon.issued',
      'coupon.redeemed',
      'webhook_subscription.disabled',
      'ping',
      'pass.installed',
      'pass.uninstalled',
      'webhook_subscription.failing',
      'webhook_delivery.exhausted',
    ]);
    expect(types.filter((e) => !e.subscribable).map((e) => e.type)).toEqual(['ping']);
    expect(res.payload).not.toContain('$ref');
    const webhooks = t.server.app.openapi.document.webhooks as Record<string, unknown>;
    for (const entry of types) {
      expect(entry.summary.length, entry.type).toBeGreaterThan(5);
      const ajv = new Ajv2020({ strict: false });
      addFormats(ajv);
      const validate = ajv.compile(entry.schema);
      const op = (webhooks[entry.type] as { post: Record<string, unknown> }).post;
      const example = (op.requestBody as { content: { 'application/json': { example: unknown } } }).content[
        'application/json'
      ].example;
      expect(validate(example), `${entry.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(validate({ ...(example as object), type: 'other' }), entry.type).toBe(false);
    }
    expect((await api('GET', '/webhook-event-types', undefined, 'acme-readonly')).statusCode).toBe(200);
    const tagsOnly = await t.inject({
      method: 'GET',
      url: '/webhook-event-types',
      headers: await t.auth('acme-admin', ['tags.get']),
    });
    expect(tagsOnly.statusCode).toBe(403);
  });
});
