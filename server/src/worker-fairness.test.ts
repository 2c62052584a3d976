import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { until as untilTruthy } from '#test-helpers/until.js';
import { subscribeWebhook } from '#test-helpers/webhook-receiver.js';
import { fanOutEvents } from './services/webhooks/deliveries.js';
import { startWorker, type WorkerRunner } from './worker.js';

/**
 * Issue 11, finding 3: dead receivers (every attempt a timeout) with thousands of waiting
 * attempts must not hold back other organizations' deliveries, voucher rounds or fan-out. The
 * production worker (startWorker with its default concurrency) on real PostgreSQL.
 */
const PENDING_PER_DEAD_RECEIVER = 1500;

let t: TestServer;
let runner: WorkerRunner | undefined;
const blackholes: TcpServer[] = [];
const sockets: Socket[] = [];
let live: Server;
let liveBase: string;
const receivedLive: string[] = [];

/**
 * A receiver that accepts connections, reads what comes and never answers: every attempt runs
 * into its timeout. It reads, so it sees the worker close a connection (the end of an attempt)
 * and closes its side: open sockets are the attempts in flight, not every connection ever opened.
 */
async function blackhole(): Promise<string> {
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  blackholes.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

beforeAll(async () => {
  t = await createTestServer({ webhookTimeoutMs: 2000, webhookRetryDelays: [60, 60, 60, 60, 60, 60, 60] });
  live = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      receivedLive.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => live.listen(0, '127.0.0.1', resolve));
  liveBase = `http://127.0.0.1:${(live.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await runner?.stop();
  for (const s of sockets) s.destroy();
  for (const b of blackholes) await new Promise((r) => b.close(r));
  live.closeAllConnections();
  await new Promise((r) => live.close(r));
  await t.close();
});

const subscribe = (clientId: string, url: string, events: string[]) => subscribeWebhook(t, url, events, clientId);

const until = <T>(what: () => Promise<T | undefined | false>, timeoutMs: number) => untilTruthy(what, timeoutMs, 50);

describe('two dead receivers with thousands of waiting attempts', () => {
  it("take their own share: another organization's deliveries and voucher job finish within seconds", async () => {
    await subscribe('acme-admin', await blackhole(), ['member.created']);
    await subscribe('acme-admin', await blackhole(), ['member.created']);
    await subscribe('globex-admin', `${liveBase}/globex`, ['member.created', 'coupon.issued']);

    // Thousands of deliveries to the dead receivers, due before anything else.
    const events = await t.db.sql<{ id: string }[]>`
      INSERT INTO events (organization_id, type, data)
      SELECT 'org-acme', 'member.created', json_build_object('member_id', gen_random_uuid(), 'brand_id', 'brand-acme')
      FROM generate_series(1, ${PENDING_PER_DEAD_RECEIVER}) RETURNING id`;
    expect(
      await fanOutEvents(
        t.db.sql,
        events.map((e) => e.id),
      ),
    ).toBe(2 * PENDING_PER_DEAD_RECEIVER);

    runner = await startWorker({ connectionString: t.db.url, sql: t.db.sql, config: t.config, pollInterval: 100 });
    await new Promise((r) => setTimeout(r, 1500)); // the dead receivers' attempts now fill what they may

    const globex = await t.auth('globex-admin');
    const started = Date.now();
    const member = await t.inject({
      method: 'POST',
      url: '/members',
      payload: { brand_id: 'brand-globex', email: 'fair@example.org' },
      headers: globex,
    });
    expect(member.statusCode, member.payload).toBe(201);
    const memberId = (member.result as { member_id: string }).member_id;
    const tag = await t.inject({
      method: 'POST',
      url: '/tags',
      payload: { brand_id: 'brand-globex', external_reference: 'fair', tag: 'Fair' },
      headers: globex,
    });
    expect(tag.statusCode, tag.payload).toBe(201);
    const tagId = (tag.result as { data: { uuid: string } }).data.uuid;
    await t.db.sql`INSERT INTO tag_members (tag_id, member_id) VALUES (${tagId}, ${memberId})`;
    const job = await t.inject({
      method: 'POST',
      url: `/tags/${tagId}/vouchers`,
      payload: { brand_id: 'brand-globex', coupon_id: 'coupon-globex' },
      headers: globex,
    });
    expect(job.statusCode, job.payload).toBe(202);
    const jobId = (job.result as { job_id: string }).job_id;

    await until(async () => {
      const res = await t.inject({
        method: 'GET',
        url: `/tags/${tagId}/vouchers/${jobId}?brand_id=brand-globex`,
        headers: globex,
      });
      return (res.result as { status: string }).status === 'done';
    }, 8000);
    await until(
      async () =>
        receivedLive.some((b) => b.includes('"coupon.issued"')) && receivedLive.some((b) => b.includes(memberId)),
      8000,
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(8000);

    // The dead receivers are still being tried, each within its own share: open connections to
    // them are the attempts in flight.
    const open = sockets.filter((s) => !s.destroyed).length;
    expect(open).toBeGreaterThan(0);
    expect(open).toBeLessThanOrEqual(2 * t.config.webhookConcurrencyPerSubscription);
  }, 60_000);
});
