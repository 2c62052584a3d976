import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent } from '@loyalty/sdk/webhooks';
import { http, HttpResponse, delay } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '../testing/fake-api.js';
import { runCli, tempConfigHome } from '../testing/run-cli.js';
import { RecentIds, reconnectDelay } from './listen.js';

// The forwarded deliveries go to a real local receiver: let them through.
const server = fakeApiServer({ onUnhandledRequest: 'bypass' });

const event = (id: string, type = 'member.created') => ({
  id,
  type,
  created_at: '2026-11-21T10:15:30.000Z',
  organization_id: 'org-acme',
  data: { member_id: 'm-1', brand_id: 'brand-acme' },
});

async function receiver() {
  const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hooks`, received, close: () => srv.close() };
}

describe('loyalty webhooks listen', { timeout: 20_000 }, () => {
  it('starts at "now", forwards new events signed with the local secret, and survives a dropped connection', async () => {
    const home = await tempConfigHome();
    const env = loggedInEnv(home);
    const secret = (await runCli(['webhooks', 'listen', '--print-secret'], { env })).stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect((await runCli(['webhooks', 'listen', '--print-secret'], { env })).stdout.trim()).toBe(secret);

    const target = await receiver();
    const controller = new AbortController();
    const queries: string[] = [];
    let calls = 0;
    server.use(
      http.get(`${API}/events`, async ({ request }) => {
        const url = new URL(request.url);
        queries.push(url.search);
        calls += 1;
        if (!url.searchParams.has('after'))
          return HttpResponse.json({ message: 'ok', data: [event('old')], next_cursor: '1' });
        if (calls === 2) return HttpResponse.error();
        if (calls === 3)
          return HttpResponse.json({
            message: 'ok',
            data: [event('e-2'), event('e-3', 'coupon.issued')],
            next_cursor: '3',
          });
        // The same event again (at-least-once): delivered only once.
        if (calls === 4)
          return HttpResponse.json({ message: 'ok', data: [event('e-3', 'coupon.issued')], next_cursor: '3' });
        await delay(50);
        return HttpResponse.json({ message: 'ok', data: [], next_cursor: '3' });
      }),
    );
    const watcher = setInterval(() => {
      if (target.received.length === 2 && calls >= 5) controller.abort();
    }, 20);
    const result = await runCli(
      ['webhooks', 'listen', '--forward-to', target.url, '--events', 'member.created,coupon.issued'],
      { env, signal: controller.signal },
    );
    clearInterval(watcher);
    target.close();

    expect(result.code).toBe(130);
    expect(result.stdout).not.toContain('old');
    expect(result.stdout).toMatch(/member\.created\s+e-2\s+member_id=m-1 brand_id=brand-acme/);
    expect(result.stdout).toMatch(/coupon\.issued\s+e-3/);
    expect(result.stderr).toContain(`Signing secret for ${target.url}: ${secret}`);
    expect(result.stderr).toMatch(/✖ Connection to the event feed lost: Cannot reach the API/);
    expect(result.stderr).toMatch(/Reconnecting in \d s \(attempt 1\)/);
    expect(result.stderr).toContain(
      'Reconnected to http://api.test; resuming from where the feed stopped (no events missed).',
    );
    expect(result.stderr).toContain(`→ 204 POST ${target.url}`);
    expect(queries[0]).toContain('types=member.created%2Ccoupon.issued');
    expect(queries[2]).toContain('after=1');
    const delivered = target.received.map((r) => constructEvent(r.body, r.headers as Record<string, string>, secret));
    expect(delivered.map((e) => e.id)).toEqual(['e-2', 'e-3']);
    expect(result.stdout.match(/e-3/g)).toHaveLength(1);
    expect(target.received[0]!.headers['loyalty-event']).toBe('member.created');
  }, 15_000);

  it('says loudly when the receiver is down and keeps listening', async () => {
    const controller = new AbortController();
    let calls = 0;
    server.use(
      http.get(`${API}/events`, async () => {
        calls += 1;
        if (calls === 1) return HttpResponse.json({ message: 'ok', data: [], next_cursor: '0' });
        if (calls === 2) return HttpResponse.json({ message: 'ok', data: [event('e-1')], next_cursor: '1' });
        controller.abort();
        return HttpResponse.json({ message: 'ok', data: [], next_cursor: '1' });
      }),
    );
    const closed = await receiver();
    closed.close();
    const result = await runCli(['webhooks', 'listen', '--forward-to', closed.url], {
      env: loggedInEnv(await tempConfigHome()),
      signal: controller.signal,
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(`→ ✖ ECONNREFUSED POST ${closed.url}`);
    expect(result.stderr).toContain('is the receiver running?');
  });

  it('stops on a permission error instead of reconnecting', async () => {
    server.use(
      http.get(`${API}/events`, () =>
        HttpResponse.json({ message: 'This action is unauthorized.', error: 'forbidden' }, { status: 403 }),
      ),
    );
    const result = await runCli(['webhooks', 'listen'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(4);
  });
});

describe('RecentIds', () => {
  it('says whether an id is new, remembering a bounded number', () => {
    const ids = new RecentIds(2);
    expect([ids.add('a'), ids.add('a'), ids.add('b'), ids.add('c'), ids.add('a')]).toEqual([
      true,
      false,
      true,
      true,
      true,
    ]);
  });
});

describe('reconnectDelay', () => {
  it('backs off 1, 2, 4 … up to 30 s, with jitter', () => {
    expect([1, 2, 3, 6, 10].map((n) => reconnectDelay(n, () => 0.5))).toEqual([1000, 2000, 4000, 30000, 30000]);
    expect(reconnectDelay(1, () => 0)).toBe(800);
    expect(reconnectDelay(1, () => 1)).toBe(1200);
  });
});
