// End to end: the subscription lifecycle through the `loyalty` binary against the real server
// and a real receiver: get, update, disable (parked), enable, test pings, recover after an outage,
// the event catalogue, and --events checked with a suggestion.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, type CliSandbox } from '#test-helpers/cli.js';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';
import { until } from '#test-helpers/until.js';

type Hit = { path: string; id: string; attempt: string; type: string };

let live: LiveServer;
let cli: CliSandbox;
let token: string;
let receiver: Server;
let base: string;
let status = 200;
const hits: Hit[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({
        path: req.url ?? '',
        id: String(req.headers['loyalty-message-id']),
        attempt: String(req.headers['loyalty-attempt']),
        type: String(req.headers['loyalty-event']),
      });
      res.writeHead(status).end(status === 200 ? 'thanks' : 'down for maintenance');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  live = await startLiveServer({ webhookDisableAfterFailures: 0 });
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

/** A member created through the API: one member.created event. */
async function newMember(): Promise<void> {
  const res = await fetch(`${live.url}/members`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ brand_id: 'brand-acme', email: `lifecycle-${crypto.randomUUID()}@example.test` }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

describe('loyalty webhooks lifecycle', { timeout: 60_000 }, () => {
  it('get, update, disable and enable, test, recover, event-types', async () => {
    const created = await json<{ id: string }>([
      'webhooks',
      'create',
      '--url',
      `${base}/hooks`,
      '--events',
      'member.created',
    ]);
    const id = created.id;

    const shown = await cli.run(['webhooks', 'get', id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('state:         active');
    expect(shown.stdout).not.toContain('whsec_');

    const updated = await json<{ url: string; description: string }>([
      'webhooks',
      'update',
      id,
      '--url',
      `${base}/v2`,
      '--description',
      'CRM sync',
    ]);
    expect(updated).toMatchObject({ url: `${base}/v2`, description: 'CRM sync' });
    const nothing = await cli.run(['webhooks', 'update', id]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('Nothing to change.');
    const typo = await cli.run(['webhooks', 'update', id, '--events', 'member.create']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Unknown event member.create. Did you mean member.created?');

    // A ping: signed, to this subscription only, reported.
    const ping = await cli.run(['webhooks', 'test', id]);
    expect(ping.code, ping.stderr).toBe(0);
    expect(ping.stderr).toMatch(/Ping [0-9a-f-]{36} delivered \(HTTP 200 in \d+ ms: thanks\)/);
    expect(hits.at(-1)).toMatchObject({ path: '/v2', type: 'ping', attempt: '1' });

    // Disabled: no delivery; enabled again: nothing of the meantime arrives.
    const disabled = await json<{ active: boolean; disabled_reason: string }>(['webhooks', 'disable', id]);
    expect(disabled).toMatchObject({ active: false, disabled_reason: 'manual' });
    const before = hits.length;
    await newMember();
    await new Promise((r) => setTimeout(r, 800));
    expect(hits.length).toBe(before);
    status = 500;
    const failedPing = await cli.run(['webhooks', 'test', id]);
    expect(failedPing.code).toBe(1);
    expect(failedPing.stderr).toContain('failed (HTTP 500');
    expect((await json<{ active: boolean }>(['webhooks', 'enable', id])).active).toBe(true);

    // An outage: every attempt fails (a short schedule in this server), then recovery.
    const since = new Date(Date.now() - 1000).toISOString();
    await newMember();
    await newMember();
    await until(
      async () => {
        const log = await json<{ data: { status: string }[] }>(['webhooks', 'deliveries', id, '--status', 'failed']);
        return log.data.length === 2;
      },
      20_000,
      250,
    );
    const failedIds = [...new Set(hits.filter((h) => h.type === 'member.created').map((h) => h.id))];
    expect(failedIds).toHaveLength(2);
    status = 200;
    const recovered = await cli.run(['webhooks', 'recover', id, '--since', since]);
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(recovered.stderr).toContain('2 failed deliveries');
    await until(() => hits.filter((h) => h.attempt === '9').length === 2, 20_000);
    expect(
      hits
        .filter((h) => h.attempt === '9')
        .map((h) => h.id)
        .sort(),
    ).toEqual([...failedIds].sort());
    const badSince = await cli.run(['webhooks', 'recover', id, '--since', 'last tuesday']);
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toContain('--since must be a duration ago');
    const again = await cli.run(['webhooks', 'recover', id, '--since', '1h']);
    expect(again.stderr).toContain('0 failed deliveries');

    const types = await json<{ type: string; subscribable: boolean; schema: object }[]>(['webhooks', 'event-types']);
    expect(types.map((t) => t.type)).toContain('webhook_subscription.disabled');
    expect(types.find((t) => t.type === 'ping')?.subscribable).toBe(false);
    const table = await cli.run(['webhooks', 'event-types']);
    expect(table.stdout).toMatch(/coupon\.redeemed\s+yes\s+A coupon pass was redeemed/);
  });
});
