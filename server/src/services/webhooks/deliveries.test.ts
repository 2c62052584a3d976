import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { subscribeWebhook, useWebhookTestBed } from '#test-helpers/webhook-receiver.js';
import type { Config } from '../../config.js';
import type { Schemas } from '../../lib/schemas.js';
import { snippetOf } from '../../lib/safe-fetch.js';
import type { Resolver } from '../../lib/ssrf.js';
import { resolverTo } from '#test-helpers/resolver.js';
import { startWorker } from '../../worker.js';
import { recordEvents } from './events.js';

/**
 * Webhook delivery end to end: real PostgreSQL, the real graphile-worker runner, and a real HTTP
 * receiver on 127.0.0.1. Signatures are checked here with node:crypto, independently of
 * @loyalty/sdk/signing, which the server signs with.
 */

type Received = { path: string; headers: IncomingHttpHeaders; body: string; at: number };
type Behaviour = (req: Received, res: ServerResponse) => void;

let t: TestServer;
let base: string;
let port: number;
const received: Received[] = [];
const behaviours = new Map<string, Behaviour>();

const delays = [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3];

// Every test starts without subscriptions (or queued work) of the ones before it.
const { run } = useWebhookTestBed(
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(r);
      (behaviours.get(r.path) ?? ((_r, out) => out.writeHead(200).end('ok')))(r, res);
    });
  },
  (bed) => {
    t = bed.t;
    ({ port, base } = bed.receiver);
  },
);

async function work(overrides: Partial<Config> = {}, resolve?: Resolver) {
  const config: Config = { ...t.config, webhookRetryDelays: delays, webhookTimeoutMs: 5000, ...overrides };
  await run(() =>
    startWorker({
      connectionString: t.db.url,
      sql: t.db.sql,
      config,
      concurrency: 8,
      pollInterval: 50,
      tasks: { resolve },
    }),
  );
}

const subscribe = (path: string, events?: string[], url = `${base}${path}`) => subscribeWebhook(t, url, events);

/** A member.created event through the outbox, as every other part of the server records it. */
async function emit(organizationId = 'org-acme') {
  const memberId = crypto.randomUUID();
  const [id] = await t.db.sql.begin((tx) =>
    recordEvents(tx, [
      { organizationId, type: 'member.created', data: { member_id: memberId, brand_id: 'brand-acme' } },
    ]),
  );
  return id!;
}

const requestsTo = (path: string) => received.filter((r) => r.path === path);
const deliveryOf = async (eventId: string) => {
  const [row] = await t.db.sql<{ id: string; status: string; attempts: number; subscription_id: string }[]>`
    SELECT id, status, attempts, subscription_id FROM webhook_deliveries WHERE event_id = ${eventId}`;
  return row;
};
const logOf = async (subscriptionId: string) => {
  const res = await t.inject({
    method: 'GET',
    url: `/webhook-subscriptions/${subscriptionId}/deliveries`,
    headers: await t.auth('acme-admin'),
  });
  expect(res.statusCode).toBe(200);
  return (res.result as Schemas['WebhookDeliveryListResponse']).data;
};

const hmacHex = (key: string, body: string) =>
  createHmac('sha256', Buffer.from(key, 'utf8')).update(body, 'utf8').digest('hex');
const standardSig = (secret: string, id: string, ts: string, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${ts}.${body}`)
    .digest('base64')}`;

describe('deliver_webhook', () => {
  it('POSTs the envelope with both signatures, the message id and the attempt number', async () => {
    const sub = await subscribe('/ok');
    await work();
    const eventId = await emit();
    const [req] = await until(() => requestsTo('/ok').length >= 1 && requestsTo('/ok'));
    const body = JSON.parse(req!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'organization_id', 'data']);
    expect(body).toMatchObject({
      id: eventId,
      type: 'member.created',
      organization_id: 'org-acme',
      data: { brand_id: 'brand-acme' },
    });
    expect(body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const h = req!.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h['loyalty-signature']).toBe(hmacHex(sub.secret, req!.body));
    expect(h['loyalty-message-id']).toBe(eventId);
    expect(h['loyalty-event']).toBe('member.created');
    expect(h['loyalty-attempt']).toBe('1');
    expect(h['webhook-id']).toBe(eventId);
    expect(Math.abs(Number(h['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(h['webhook-signature']).toBe(standardSig(sub.secret, eventId, String(h['webhook-timestamp']), req!.body));
    await until(async () => (await deliveryOf(eventId))?.status === 'delivered');
    const [entry] = await logOf(sub.id);
    expect(entry).toMatchObject({
      status: 'delivered',
      next_attempt_at: null,
      attempts: [{ attempt: 1, status_code: 200, error: null, response_snippet: 'ok' }],
    });
    // One id names the attempt in the receiver's request and in the delivery log.
    expect(h['x-request-id']).toBe(`${entry!.id}.1`);
    expect(entry!.attempts[0]!.request_id).toBe(h['x-request-id']);
  });

  it('retries 5xx, 408, 429 and redirects (never followed) with the attempt counting up and the same message id and bytes', async () => {
    const sub = await subscribe('/flaky');
    const script = [503, 408, 429, 302, 200];
    behaviours.set('/flaky', (_r, res) => {
      const status = script.shift() ?? 200;
      res.writeHead(status, status === 302 ? { location: `${base}/elsewhere` } : {}).end(`status ${status}`);
    });
    await work();
    const eventId = await emit();
    const reqs = await until(() => requestsTo('/flaky').length >= 5 && requestsTo('/flaky'));
    expect(reqs.map((r) => r.headers['loyalty-attempt'])).toEqual(['1', '2', '3', '4', '5']);
    expect(new Set(reqs.map((r) => r.headers['loyalty-message-id']))).toEqual(new Set([eventId]));
    expect(new Set(reqs.map((r) => r.body)).size).toBe(1);
    for (const r of reqs) {
      expect(r.headers['loyalty-signature']).toBe(hmacHex(sub.secret, r.body));
      expect(r.headers['webhook-signature']).toBe(
        standardSig(sub.secret, eventId, String(r.headers['webhook-timestamp']), r.body),
      );
    }
    // The schedule: each retry waits at least its delay after the previous attempt.
    for (let i = 1; i < reqs.length; i++) expect(reqs[i]!.at - reqs[i - 1]!.at).toBeGreaterThanOrEqual(250);
    expect(requestsTo('/elsewhere')).toHaveLength(0);
    await until(async () => (await deliveryOf(eventId))?.status === 'delivered');
    const [entry] = await logOf(sub.id);
    expect(entry!.attempts.map((a) => [a.status_code, a.error])).toEqual([
      [503, 'http_status'],
      [408, 'http_status'],
      [429, 'http_status'],
      [302, 'redirect_not_followed'],
      [200, null],
    ]);
  });

  it('does not retry a final 4xx', async () => {
    const sub = await subscribe('/gone');
    behaviours.set('/gone', (_r, res) => res.writeHead(410).end('gone'));
    await work();
    const eventId = await emit();
    await until(async () => (await deliveryOf(eventId))?.status === 'failed');
    await new Promise((r) => setTimeout(r, 800));
    expect(requestsTo('/gone')).toHaveLength(1);
    const [entry] = await logOf(sub.id);
    expect(entry).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      attempts: [{ attempt: 1, status_code: 410, error: 'http_status' }],
    });
    // Nothing pending: the subscription's lanes end instead of sleeping.
    const lanes = () => t.db.sql`SELECT 1 FROM graphile_worker.jobs WHERE key LIKE ${`webhook_lane:${sub.id}:%`}`;
    await until(async () => (await lanes()).length === 0);
  });

  it('times out a receiver that hangs, and retries it', async () => {
    const sub = await subscribe('/hang');
    let calls = 0;
    behaviours.set('/hang', (_r, res) => {
      if (++calls === 1) setTimeout(() => res.writeHead(200).end('too late'), 2000);
      else res.writeHead(204).end();
    });
    await work({ webhookTimeoutMs: 300 });
    const eventId = await emit();
    await until(async () => (await deliveryOf(eventId))?.status === 'delivered');
    const [entry] = await logOf(sub.id);
    expect(entry!.attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, null, 'timeout'],
      [2, 204, null],
    ]);
    expect(entry!.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(250);
    expect(entry!.attempts[0]!.duration_ms).toBeLessThan(1500);
  });

  it('gives up after 8 attempts in total', async () => {
    const sub = await subscribe('/down');
    behaviours.set('/down', (_r, res) => res.writeHead(500).end('x'.repeat(5000)));
    await work({ webhookRetryDelays: [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05] });
    const eventId = await emit();
    await until(async () => (await deliveryOf(eventId))?.status === 'failed');
    await new Promise((r) => setTimeout(r, 300));
    expect(requestsTo('/down').map((r) => r.headers['loyalty-attempt'])).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
    ]);
    const [entry] = await logOf(sub.id);
    expect(entry!.attempts).toHaveLength(8);
    // The response is read only up to the cap; the log keeps at most 64 characters (lib/safe-fetch.test.ts).
    expect(entry!.attempts[0]!.response_snippet).toBe('x'.repeat(64));
  });

  it('counts a connection error as retryable', async () => {
    const sub = await subscribe('/x', ['member.created'], 'http://127.0.0.1:1/x');
    await work();
    const eventId = await emit();
    await until(async () => ((await deliveryOf(eventId))?.attempts ?? 0) >= 2);
    const [entry] = await logOf(sub.id);
    expect(entry!.attempts[0]).toMatchObject({ status_code: null, error: 'connection_error' });
  });

  it('drops waiting retries and sends nothing more once the subscription is deleted', async () => {
    const sub = await subscribe('/deleted');
    behaviours.set('/deleted', (_r, res) => res.writeHead(503).end());
    await work({ webhookRetryDelays: [60, 60, 60, 60, 60, 60, 60] });
    const eventId = await emit();
    const delivery = await until(async () => {
      const d = await deliveryOf(eventId);
      return d?.attempts === 1 ? d : undefined;
    });
    // The lane sleeps until the retry in a minute.
    const jobs = () =>
      t.db.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key LIKE ${`webhook_lane:${sub.id}:%`}`;
    await until(async () => (await jobs())[0]!.n >= 1);
    expect(delivery.id).toBeDefined();
    const del = await t.inject({
      method: 'DELETE',
      url: `/webhook-subscriptions/${sub.id}`,
      headers: await t.auth('acme-admin'),
    });
    expect(del.statusCode).toBe(200);
    expect((await jobs())[0]!.n).toBe(0);
    expect(await deliveryOf(eventId)).toBeUndefined();
    // A queued first attempt of the deleted subscription sends nothing either.
    await emit();
    await new Promise((r) => setTimeout(r, 500));
    expect(requestsTo('/deleted')).toHaveLength(1);
  });

  it('signs with both secrets during a rotation, the new one first', async () => {
    const sub = await subscribe('/rotated');
    const rotated = await t.inject({
      method: 'POST',
      url: `/webhook-subscriptions/${sub.id}/rotate-secret`,
      headers: await t.auth('acme-admin'),
    });
    expect(rotated.statusCode).toBe(200);
    const { secret: next, previous_secret_expires_at } = (
      rotated.result as { data: { secret: string; previous_secret_expires_at: string } }
    ).data;
    expect(next).not.toBe(sub.secret);
    expect(new Date(previous_secret_expires_at).getTime() - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    await work();
    const eventId = await emit();
    const [req] = await until(() => requestsTo('/rotated').length >= 1 && requestsTo('/rotated'));
    const ts = String(req!.headers['webhook-timestamp']);
    expect(req!.headers['loyalty-signature']).toBe(`${hmacHex(next, req!.body)} ${hmacHex(sub.secret, req!.body)}`);
    expect(req!.headers['webhook-signature']).toBe(
      `${standardSig(next, eventId, ts, req!.body)} ${standardSig(sub.secret, eventId, ts, req!.body)}`,
    );
    // Once the overlap is over only the new secret signs.
    await t.db
      .sql`UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${sub.id}`;
    await emit();
    const [, second] = await until(() => requestsTo('/rotated').length >= 2 && requestsTo('/rotated'));
    expect(second!.headers['loyalty-signature']).toBe(hmacHex(next, second!.body));
  });

  it('sends a failed delivery once more on a manual retry, numbering the attempt on', async () => {
    const sub = await subscribe('/manual');
    let healthy = false;
    behaviours.set('/manual', (_r, res) => res.writeHead(healthy ? 200 : 400).end());
    await work();
    const eventId = await emit();
    const delivery = await until(async () => {
      const d = await deliveryOf(eventId);
      return d?.status === 'failed' ? d : undefined;
    });
    healthy = true;
    const res = await t.inject({
      method: 'POST',
      url: `/webhook-subscriptions/${sub.id}/deliveries/${delivery.id}/retry`,
      headers: await t.auth('acme-admin'),
    });
    expect(res.statusCode).toBe(202);
    expect((res.result as { data: { status: string; next_attempt_at: string | null } }).data).toMatchObject({
      status: 'pending',
    });
    await until(async () => (await deliveryOf(eventId))?.status === 'delivered');
    expect(requestsTo('/manual').map((r) => r.headers['loyalty-attempt'])).toEqual(['1', '2']);
  });
});

describe('snippets logged before the 64-character rule', () => {
  it('take the form of new ones when the migration runs', async () => {
    const sub = await subscribe('/old-snippet');
    await work();
    const eventId = await emit();
    await until(async () => (await deliveryOf(eventId))?.status === 'delivered');
    const old = `  Welcome\r\n\t\x1b[2J\u202Eadmin\u200B panel ${'x'.repeat(480)}`;
    await t.db
      .sql`UPDATE webhook_attempts a SET response_snippet = ${old} FROM webhook_deliveries d WHERE d.id = a.delivery_id AND d.subscription_id = ${sub.id}`;
    // unsafe: the migration's own text, several statements, as the migrator runs it.
    await t.db.sql.unsafe(
      readFileSync(new URL('../../../migrations/0033_short_response_snippets.sql', import.meta.url), 'utf8'),
    );
    const [entry] = await logOf(sub.id);
    expect(entry!.attempts[0]!.response_snippet).toBe(snippetOf(Buffer.from(old), 'text/plain'));
    expect(entry!.attempts[0]!.response_snippet).toHaveLength(64);
  });
});

describe('sending safely (SSRF)', () => {
  const insertSubscription = async (url: string) => {
    const [row] = await t.db.sql<{ id: string }[]>`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
      VALUES ('org-acme', ${url}, '{member.created}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=') RETURNING id`;
    return row!.id;
  };

  it('refuses at send time a name that resolves to 127.0.0.1, a literal private address and localhost', async () => {
    const named = await insertSubscription(`https://hooks.example.test:${port}/ssrf-named`);
    const literal = await insertSubscription(`https://127.0.0.1:${port}/ssrf-literal`);
    const local = await insertSubscription(`https://localhost:${port}/ssrf-localhost`);
    const resolve = resolverTo('127.0.0.1');
    await work({ webhookAllowInsecure: false }, (host, options, cb) =>
      host === 'localhost' ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : resolve(host, options, cb),
    );
    const eventId = await emit();
    for (const sub of [named, literal, local]) {
      const [d] = await until(() =>
        t.db.sql<
          { attempts: number }[]
        >`SELECT attempts FROM webhook_deliveries WHERE subscription_id = ${sub} AND event_id = ${eventId} AND attempts >= 1`.then(
          (r) => r.length && r,
        ),
      );
      expect(d!.attempts).toBeGreaterThanOrEqual(1);
      const [a] = await t.db.sql<{ error: string; status_code: number | null }[]>`
        SELECT a.error, a.status_code FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = ${sub} AND a.attempt = 1`;
      expect(a).toEqual({ error: 'address_not_allowed', status_code: null });
    }
    expect(resolve.calls).toContain('hooks.example.test');
    expect(received.filter((r) => r.path.startsWith('/ssrf'))).toHaveLength(0);
  });

  it('does not send to a stored URL whose port the rule refuses (stored before the rule, or by hand)', async () => {
    const sub = await insertSubscription('https://hooks.example.test:6379/ssrf-port');
    const resolve = resolverTo('93.184.216.34');
    await work({ webhookAllowInsecure: false }, resolve);
    const eventId = await emit();
    await until(
      async () => (await deliveryOf(eventId))?.status === 'failed' || ((await deliveryOf(eventId))?.attempts ?? 0) >= 1,
    );
    const [entry] = await logOf(sub);
    expect(entry!.attempts[0]).toMatchObject({
      status_code: null,
      error: 'address_not_allowed',
      response_snippet: null,
    });
    expect(resolve.calls).toEqual([]);
  });

  it('connects to the address the checked lookup returned (no second resolution)', async () => {
    await subscribe('/pinned', ['member.created'], `http://hooks.example.test:${port}/pinned`);
    const resolve = resolverTo('127.0.0.1');
    await work({}, resolve);
    await emit();
    const [req] = await until(() => requestsTo('/pinned').length >= 1 && requestsTo('/pinned'));
    expect(req!.headers.host).toBe(`hooks.example.test:${port}`);
    expect(resolve.calls).toEqual(['hooks.example.test']);
  });
});
