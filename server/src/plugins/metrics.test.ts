import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { issueToken } from '../services/platform/tokens.js';
import { metricsAccess, metricsStartWarning } from './metrics.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

/** Server `open`: no metrics token. Server `guarded`: LOYALTY_METRICS_TOKEN set, two requests per token and window. */
let open: TestServer;
let guarded: TestServer;
beforeAll(async () => {
  [open, guarded] = await Promise.all([
    createTestServer({ metricsCacheSeconds: 1 }),
    createTestServer({ metricsToken: METRICS_TOKEN, rateLimitToken: 2, rateLimitWindowSeconds: 3600 }),
  ]);
});
afterAll(() => Promise.all([open?.close(), guarded?.close()]));

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the sample of that name whose labels include `labels` (undefined when there is none). */
const sampleValue = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

/** The database gauges of `open` are read again at most once a second (metricsCacheSeconds: 1). */
const afterRefreshInterval = () => new Promise((r) => setTimeout(r, 1100));

async function scrape(t: TestServer, headers: Record<string, string> = {}) {
  const res = await t.inject({ method: 'GET', url: '/metrics', headers });
  expect(res.statusCode, res.payload).toBe(200);
  return { text: res.payload, samples: parse(res.payload) };
}
const scrapeGuarded = () => scrape(guarded, { authorization: `Bearer ${METRICS_TOKEN}` });

/** A token straight from the service: one through POST /oauth/token would be counted by the rate limit. */
const freshToken = async (t: TestServer) => {
  const { access_token } = await issueToken(t.db.sql, {
    grant_type: 'client_credentials',
    client_id: 'acme-admin',
    client_secret: 'acme-admin-secret',
  });
  return { authorization: `Bearer ${access_token}` };
};

describe('GET /metrics', () => {
  it('records request durations by route template (never the URL) and status, unknown paths as unmatched', async () => {
    const headers = await open.auth('acme-admin');
    const email = `metrics-${randomUUID()}@example.org`;
    const created = await open.inject({
      method: 'POST',
      url: '/members',
      headers,
      payload: { brand_id: 'brand-acme', email },
    });
    expect(created.statusCode).toBe(201);
    const memberId = JSON.parse(created.payload).member_id as string;
    expect(
      (await open.inject({ method: 'GET', url: `/members/${memberId}?brand_id=brand-acme`, headers })).statusCode,
    ).toBe(200);
    expect(
      (await open.inject({ method: 'GET', url: `/members/${memberId}?brand_id=brand-acme`, headers })).statusCode,
    ).toBe(200);
    const missing = randomUUID();
    expect(
      (await open.inject({ method: 'GET', url: `/members/${missing}?brand_id=brand-acme`, headers })).statusCode,
    ).toBe(404);
    expect((await open.inject({ method: 'GET', url: `/no-such-path/${missing}`, headers })).statusCode).toBe(404);

    const { text, samples } = await scrape(open);
    const count = (labels: Record<string, string>) =>
      sampleValue(samples, 'loyalty_http_request_duration_seconds_count', labels);
    expect(count({ method: 'GET', route: '/members/{uuid}', status: '200' })).toBe(2);
    expect(count({ method: 'GET', route: '/members/{uuid}', status: '404' })).toBe(1);
    expect(count({ method: 'POST', route: '/members', status: '201' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(
      sampleValue(samples, 'loyalty_http_request_duration_seconds_bucket', {
        route: '/members/{uuid}',
        status: '200',
        le: '+Inf',
      }),
    ).toBe(2);
    // No raw URL, id or query string in any label.
    expect(text).not.toContain(memberId);
    expect(text).not.toContain(missing);
    expect(text).not.toContain('no-such-path');
    expect(text).not.toContain('brand_id=');
    // Node's process metrics, in this server's own registry.
    expect(sampleValue(samples, 'loyalty_process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'loyalty_metrics_database_up')).toBe(1);
  });

  it('counts 429 answers of the rate limit by policy and route', async () => {
    const before =
      sampleValue((await scrapeGuarded()).samples, 'loyalty_rate_limit_rejections_total', {
        scope: 'token',
        route: '/tags',
      }) ?? 0;
    const headers = await freshToken(guarded);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await guarded.inject({ method: 'GET', url: '/tags', headers })).statusCode);
    expect(statuses).toEqual([200, 200, 429, 429]);
    const { samples } = await scrapeGuarded();
    expect(sampleValue(samples, 'loyalty_rate_limit_rejections_total', { scope: 'token', route: '/tags' })).toBe(
      before + 2,
    );
    // /metrics itself is not rate limited: many scrapes in a row all answer.
    for (let i = 0; i < 5; i++) await scrapeGuarded();
  });

  it('counts idempotent replays and key conflicts', async () => {
    const headers = { ...(await open.auth('acme-admin')), 'idempotency-key': `metrics-${randomUUID()}` };
    const body = { brand_id: 'brand-acme', external_reference: `metrics-${randomUUID()}`, tag: 'Metrics' };
    expect((await open.inject({ method: 'POST', url: '/tags', headers, payload: body })).statusCode).toBe(201);
    let { samples } = await scrape(open);
    expect(sampleValue(samples, 'loyalty_idempotency_replays_total', { route: '/tags' }) ?? 0).toBe(0);
    const replay = await open.inject({ method: 'POST', url: '/tags', headers, payload: body });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const reuse = await open.inject({ method: 'POST', url: '/tags', headers, payload: { ...body, tag: 'Other' } });
    expect(reuse.statusCode).toBe(422);
    ({ samples } = await scrape(open));
    expect(sampleValue(samples, 'loyalty_idempotency_replays_total', { route: '/tags' })).toBe(1);
    expect(sampleValue(samples, 'loyalty_idempotency_conflicts_total', { reason: 'reuse', route: '/tags' })).toBe(1);
    expect(sampleValue(samples, 'loyalty_idempotency_conflicts_total', { reason: 'in_progress' })).toBeUndefined();
  });

  it('with LOYALTY_METRICS_TOKEN, answers 401 without that bearer token (also to an OAuth token) and 200 with it', async () => {
    const unauthenticated = { message: 'Unauthenticated.', error: 'unauthenticated' };
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789abcdef',
      `Bearer ${METRICS_TOKEN}x`,
      `Basic ${METRICS_TOKEN}`,
      (await freshToken(guarded)).authorization,
    ]) {
      const res = await guarded.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(JSON.parse(res.payload)).toEqual(unauthenticated);
      expect(res.payload).not.toContain('loyalty_');
    }
    const ok = await guarded.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.payload).toContain('# TYPE loyalty_http_request_duration_seconds histogram');
    // Without the setting the endpoint is open.
    expect((await open.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  });

  it('off loopback without LOYALTY_METRICS_TOKEN the server starts; /metrics answers 401 naming the variable to anyone, /health 200', async () => {
    const t = await createTestServer({ host: '0.0.0.0', port: 0, metricsToken: undefined });
    try {
      await t.server.start(); // listens on 0.0.0.0: the start goes on
      for (const authorization of [
        undefined,
        'Bearer anything-0123456789abcdef',
        (await freshToken(t)).authorization,
      ]) {
        const res = await t.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
        expect(res.statusCode, String(authorization)).toBe(401);
        const body = JSON.parse(res.payload) as { message: string; error: string };
        expect(body.error).toBe('unauthenticated');
        expect(body.message).toMatch(/LOYALTY_METRICS_TOKEN/);
        expect(res.headers['www-authenticate']).toBe('Bearer');
        expect(res.payload).not.toContain('loyalty_');
      }
      expect((await t.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      await t.server.stop();
      await t.close();
    }
  });

  it('is open on loopback without a token, needs the token wherever it is set, and is off elsewhere without one', () => {
    const token = 'metrics-token-0123456789';
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.5',
      '192.168.1.2',
      'sandbox.example.com',
      '127.0.0.1.nip.io',
      '[::1]x',
    ]) {
      expect(metricsAccess({ host, metricsToken: undefined }), host).toBe('off');
      expect(metricsStartWarning({ host, metricsToken: undefined }), host).toMatch(
        /^loyalty: warning: GET \/metrics is off .*until LOYALTY_METRICS_TOKEN is set/,
      );
      expect(metricsAccess({ host, metricsToken: token }), host).toBe('token');
      expect(metricsStartWarning({ host, metricsToken: token }), host).toBeUndefined();
    }
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '0:0:0:0:0:0:0:1', '[::1]']) {
      expect(metricsAccess({ host, metricsToken: undefined }), host).toBe('open');
      expect(metricsStartWarning({ host, metricsToken: undefined }), host).toBeUndefined();
      expect(metricsAccess({ host, metricsToken: token }), host).toBe('token');
    }
  });

  it('reports the worker queue per task: depth, due jobs and the age of the oldest due job', async () => {
    const task = 'metrics_test_task';
    await open.db.sql`SELECT graphile_worker.add_job(${task}, '{}'::json)`;
    await open.db.sql`SELECT graphile_worker.add_job(${task}, '{}'::json, run_at => now() - interval '90 seconds')`;
    await open.db.sql`SELECT graphile_worker.add_job(${task}, '{}'::json, run_at => now() + interval '1 hour')`;
    await afterRefreshInterval();
    const { samples } = await scrape(open);
    expect(sampleValue(samples, 'loyalty_worker_queue_depth', { task })).toBe(3);
    expect(sampleValue(samples, 'loyalty_worker_queue_due', { task })).toBe(2);
    const age = sampleValue(samples, 'loyalty_worker_oldest_job_age_seconds', { task })!;
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(600);
    await open.db
      .sql`DELETE FROM graphile_worker._private_jobs WHERE task_id = (SELECT id FROM graphile_worker._private_tasks WHERE identifier = ${task})`;
    // Within a second of the last refresh a scrape answers the values read then (a flood of scrapes costs one).
    expect(sampleValue((await scrape(open)).samples, 'loyalty_worker_queue_depth', { task })).toBe(3);
    await afterRefreshInterval();
    expect(sampleValue((await scrape(open)).samples, 'loyalty_worker_queue_depth', { task })).toBeUndefined();
  });

  it('by default answers the database gauges from a cache 10 s old at most: a scrape a second later queries nothing', async () => {
    const t = await createTestServer({ metricsToken: METRICS_TOKEN });
    try {
      expect(t.config.metricsCacheSeconds).toBe(10);
      const headers = { authorization: `Bearer ${METRICS_TOKEN}` };
      const task = 'metrics_cache_task';
      const depth = async () => sampleValue((await scrape(t, headers)).samples, 'loyalty_worker_queue_depth', { task });
      expect(await depth()).toBeUndefined();
      await t.db.sql`SELECT graphile_worker.add_job(${task}, '{}'::json)`;
      await afterRefreshInterval();
      expect(await depth()).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('reports voucher jobs by status, pending deliveries and connections from the database', async () => {
    const { samples } = await scrape(open);
    for (const status of ['queued', 'running', 'done', 'failed'])
      expect(sampleValue(samples, 'loyalty_voucher_jobs', { status }), status).toBeTypeOf('number');
    expect(sampleValue(samples, 'loyalty_webhook_deliveries_pending')).toBe(0);
    expect(sampleValue(samples, 'loyalty_passes_estimate', { kind: 'coupon' })).toBeTypeOf('number');
    // The scrape itself runs on a connection of this database.
    expect(
      samples.filter((s) => s.name === 'loyalty_db_connections').reduce((n, s) => n + s.value, 0),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts event-feed long polls while they are open', async () => {
    const headers = await open.auth('acme-admin');
    const gauge = async () => sampleValue((await scrape(open)).samples, 'loyalty_event_feed_long_polls_open');
    expect(await gauge()).toBe(0);
    // After the newest event, so that the request waits.
    const cursor = JSON.parse((await open.inject({ method: 'GET', url: '/events', headers })).payload)
      .next_cursor as string;
    const poll = open.inject({ method: 'GET', url: `/events?wait=2&after=${encodeURIComponent(cursor)}`, headers });
    let seen: number | undefined;
    for (let i = 0; i < 40 && seen !== 1; i++) {
      await new Promise((r) => setTimeout(r, 25));
      seen = await gauge();
    }
    expect(seen).toBe(1);
    expect((await poll).statusCode).toBe(200);
    expect(await gauge()).toBe(0);
    // A request without wait is no long poll.
    expect((await open.inject({ method: 'GET', url: '/events', headers })).statusCode).toBe(200);
    expect(await gauge()).toBe(0);
  });

  it('shows no secrets: access tokens, the metrics token, client secrets, e-mails', async () => {
    const token = (await freshToken(guarded)).authorization.slice('Bearer '.length);
    const email = `secret-${randomUUID()}@example.org`;
    await guarded.inject({
      method: 'POST',
      url: '/members',
      headers: { authorization: `Bearer ${token}` },
      payload: { brand_id: 'brand-acme', email },
    });
    await guarded.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
    });
    const { text } = await scrapeGuarded();
    expect(text).toContain('route="/members"');
    for (const secret of [token, METRICS_TOKEN, 'acme-admin-secret', email, '@example.org'])
      expect(text).not.toContain(secret);
  });
});
