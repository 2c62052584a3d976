// End to end: the warnings before a subscription is disabled (issue 29, item 3) through the
// `loyalty` binary against the real server and worker, with a real receiver: one subscription
// points at a receiver that is down, another at a working one that hears, verified with the SDK,
// `webhook_delivery.exhausted` for each delivery that used its 8 attempts, one
// `webhook_subscription.failing` before the automatic disable, and the disable itself.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent, type WebhookEvent } from '@loyalty/sdk/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, type CliSandbox } from '#test-helpers/cli.js';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';
import { until } from '#test-helpers/until.js';

type Hit = { path: string; headers: IncomingHttpHeaders; body: string };

let live: LiveServer;
let cli: CliSandbox;
let token: string;
let receiver: Server;
let base: string;
const hits: Hit[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      hits.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (path === '/down') res.writeHead(503).end('down for maintenance');
      else res.writeHead(200).end('thanks');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  // The warning after 2 failed deliveries in a row, the disable after 3; retries 0.2 s apart.
  live = await startLiveServer({
    webhookFailingAfter: 2,
    webhookDisableAfterFailures: 3,
    webhookDisableAfterSeconds: 0,
  });
  cli = await cliSandbox(live.url);
  token = await fetchToken(live.url, 'acme-admin');
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

const json = async <T>(args: string[]): Promise<T> => {
  const result = await cli.run([...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
};

async function newMember(): Promise<void> {
  const res = await fetch(`${live.url}/members`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ brand_id: 'brand-acme', email: `warnings-${crypto.randomUUID()}@example.test` }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

describe('loyalty webhooks: warnings before disabling', { timeout: 60_000 }, () => {
  it('a working subscription hears of the failing one: exhausted deliveries, one warning, then the disable', async () => {
    const types = await json<{ type: string; subscribable: boolean }[]>(['webhooks', 'event-types']);
    expect(types.filter((t) => t.type.startsWith('webhook_'))).toEqual([
      expect.objectContaining({ type: 'webhook_subscription.disabled', subscribable: true }),
      expect.objectContaining({ type: 'webhook_subscription.failing', subscribable: true }),
      expect.objectContaining({ type: 'webhook_delivery.exhausted', subscribable: true }),
    ]);

    // The failing one subscribes to everything: it still never hears of itself.
    const down = await json<{ id: string }>(['webhooks', 'create', '--url', `${base}/down`]);
    const ops = await json<{ id: string; secret: string }>([
      'webhooks',
      'create',
      '--url',
      `${base}/ops`,
      '--events',
      'webhook_subscription.failing,webhook_delivery.exhausted',
      '--events',
      'webhook_subscription.disabled',
    ]);
    for (let i = 0; i < 3; i++) await newMember();

    const heard = () =>
      hits.filter((h) => h.path === '/ops').map((h): WebhookEvent => constructEvent(h.body, h.headers, ops.secret));
    const events = await until(() => heard().length === 5 && heard(), 30_000, 100);
    const exhausted = events.flatMap((e) => (e.type === 'webhook_delivery.exhausted' ? [e.data] : []));
    expect(exhausted).toHaveLength(3);
    for (const data of exhausted)
      expect(data).toMatchObject({
        subscription_id: down.id,
        event_type: 'member.created',
        attempts: 8,
        last_status: 503,
        last_error: 'http_status',
      });
    const failing = events.flatMap((e) => (e.type === 'webhook_subscription.failing' ? [e.data] : []));
    expect(failing).toEqual([
      {
        subscription_id: down.id,
        url: `${base}/down`,
        consecutive_failures: 2,
        disable_after: 3,
        last_status: 503,
        last_error: 'http_status',
        first_failure_at: expect.any(String),
      },
    ]);
    const disabled = events.flatMap((e) => (e.type === 'webhook_subscription.disabled' ? [e.data] : []));
    expect(disabled).toEqual([expect.objectContaining({ subscription_id: down.id, reason: 'too_many_failures' })]);
    // The warning came before the disable.
    const order = events.map((e) => e.type).filter((t) => t !== 'webhook_delivery.exhausted');
    expect(order).toEqual(['webhook_subscription.failing', 'webhook_subscription.disabled']);

    const downTypes = new Set(hits.filter((h) => h.path === '/down').map((h) => h.headers['loyalty-event']));
    expect([...downTypes]).toEqual(['member.created']);
    expect(hits.filter((h) => h.path === '/down')).toHaveLength(24);

    // The feed shows them too, and trigger explains how they come about. The feed shows an event
    // once every transaction older than its own has ended (its cursor never skips one that commits
    // late): a transaction still open on a busy machine holds it back for a moment, so it is
    // polled for, and must never show a second one.
    const failingInFeed = async () => {
      const feed = await fetch(`${live.url}/events?types=webhook_subscription.failing`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(feed.status, await feed.clone().text()).toBe(200);
      const listed = (await feed.json()) as { data: { type: string; data: { subscription_id: string } }[] };
      return listed.data.map((e) => [e.type, e.data.subscription_id]);
    };
    const listed = await until(async () => {
      const seen = await failingInFeed();
      return seen.length > 0 && seen;
    }, 10_000);
    expect(listed).toEqual([['webhook_subscription.failing', down.id]]);
    const trigger = await cli.run(['trigger', 'webhook_delivery.exhausted']);
    expect(trigger.code).toBe(2);
    expect(trigger.stderr).toContain('A delivery emits it when its last attempt failed');
  });
});
