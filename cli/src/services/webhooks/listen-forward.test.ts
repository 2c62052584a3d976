import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent } from '@loyalty/sdk/webhooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import { backoffDelay, DestinationQueue, type FeedEvent, type ForwardReport, verdict } from './listen-forward.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const event = (id: string, type: FeedEvent['type'] = 'member.created'): FeedEvent =>
  ({
    id,
    type,
    created_at: '2026-11-21T10:15:30.000Z',
    organization_id: 'org-acme',
    data: { member_id: 'm-1', brand_id: 'brand-acme' },
  }) as FeedEvent;

type Answer = number | 'hang';

/** A local receiver answering each request with `answer(request number, event id)`; keeps what it got. */
async function receiver(answer: (n: number, id: string) => Answer = () => 204) {
  const received: Array<{ headers: IncomingHttpHeaders; body: string; id: string; at: number }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = (JSON.parse(body) as { id: string }).id;
      received.push({ headers: req.headers, body, id, at: Date.now() });
      const status = answer(received.length, id);
      if (status !== 'hang') res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

function queueTo(url: string, options: { retries?: number; headers?: Record<string, string> } = {}) {
  const reports: ForwardReport[] = [];
  const settled: Array<() => void> = [];
  const queue = new DestinationQueue({
    url,
    secret: SECRET,
    headers: options.headers ?? {},
    retries: options.retries ?? 5,
    report: (report) => {
      reports.push(report);
      for (const wake of settled.splice(0)) wake();
    },
    delay: (retry) => 20 * retry,
  });
  /** Resolves once `count` final outcomes (not `retrying`) were reported. */
  const finals = async (count: number): Promise<ForwardReport[]> => {
    const final = () => reports.filter((r) => r.outcome !== 'retrying');
    while (final().length < count) await new Promise<void>((resolve) => settled.push(resolve));
    return final();
  };
  return { queue, reports, finals };
}

describe('verdict', () => {
  it('follows the delivery rules: 2xx delivered, 4xx but 408 and 429 final, everything else retried', () => {
    const of = (status?: number) =>
      verdict(status === undefined ? { error: 'ECONNREFUSED', ms: 1 } : { status, ms: 1 });
    expect([200, 204, 299].map(of)).toEqual(['delivered', 'delivered', 'delivered']);
    expect([400, 401, 404, 410, 422].map(of)).toEqual(Array(5).fill('rejected'));
    expect([408, 429, 500, 503, 301, 302, undefined].map(of)).toEqual(Array(7).fill('retry'));
  });
});

describe('backoffDelay', () => {
  it('backs off 1, 2, 4 … up to 30 s, with ±20 % jitter', () => {
    expect([1, 2, 3, 6, 10].map((n) => backoffDelay(n, () => 0.5))).toEqual([1000, 2000, 4000, 30000, 30000]);
    expect([backoffDelay(1, () => 0), backoffDelay(1, () => 1)]).toEqual([800, 1200]);
  });
});

describe('DestinationQueue', () => {
  it('retries a failing forward with the same id and body, counting Loyalty-Attempt up, signed each time', async () => {
    const target = await receiver((n) => (n === 1 ? 503 : n === 2 ? 429 : 204));
    const { queue, reports, finals } = queueTo(target.url, { headers: { 'x-env': 'dev' } });
    queue.push(event('e-1'));
    await finals(1);
    expect(reports.map((r) => [r.outcome, r.attempt, r.status])).toEqual([
      ['retrying', 1, 503],
      ['retrying', 2, 429],
      ['delivered', 3, 204],
    ]);
    expect(reports[0]!.retryInMs).toBe(20);
    expect(target.received.map((r) => r.headers['loyalty-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(target.received.map((r) => r.body)).size).toBe(1);
    for (const { headers, body } of target.received) {
      expect(headers['webhook-id']).toBe('e-1');
      expect(headers['loyalty-message-id']).toBe('e-1');
      expect(headers['x-env']).toBe('dev');
      expect(constructEvent(body, headers as Record<string, string>, SECRET).id).toBe('e-1');
    }
  });

  it('does not retry a 4xx other than 408 and 429, and gives up after the retries', async () => {
    const rejecting = await receiver(() => 400);
    const first = queueTo(rejecting.url);
    first.queue.push(event('e-1'));
    expect((await first.finals(1)).map((r) => [r.outcome, r.attempt])).toEqual([['rejected', 1]]);
    expect(rejecting.received).toHaveLength(1);

    const failing = await receiver(() => 500);
    const second = queueTo(failing.url, { retries: 2 });
    second.queue.push(event('e-2'));
    second.queue.push(event('e-3'));
    const outcomes = await second.finals(2);
    expect(outcomes.map((r) => [r.event.id, r.outcome, r.attempt, r.attempts])).toEqual([
      ['e-2', 'failed', 3, 3],
      ['e-3', 'failed', 3, 3],
    ]);
    // In order: the next event starts only after the previous one is settled.
    expect(failing.received.map((r) => r.id)).toEqual(['e-2', 'e-2', 'e-2', 'e-3', 'e-3', 'e-3']);
  });

  it('reports a receiver that is not running as a connection error and retries it', async () => {
    const closed = await new Promise<string>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(`http://127.0.0.1:${port}/hooks`));
      });
    });
    const { queue, finals, reports } = queueTo(closed, { retries: 1 });
    queue.push(event('e-1'));
    await finals(1);
    expect(reports.map((r) => [r.outcome, r.error])).toEqual([
      ['retrying', 'ECONNREFUSED'],
      ['failed', 'ECONNREFUSED'],
    ]);
  });

  it('keeps order per destination while a retrying destination does not hold up another one', async () => {
    const slow = await receiver((n) => (n <= 3 ? 503 : 204));
    const fast = await receiver();
    const a = queueTo(slow.url);
    const b = queueTo(fast.url);
    a.queue.push(event('a-1'));
    a.queue.push(event('a-2'));
    b.queue.push(event('b-1', 'coupon.issued'));
    b.queue.push(event('b-2', 'coupon.issued'));
    await Promise.all([a.finals(2), b.finals(2)]);
    expect(slow.received.map((r) => r.id)).toEqual(['a-1', 'a-1', 'a-1', 'a-1', 'a-2']);
    expect(fast.received.map((r) => r.id)).toEqual(['b-1', 'b-2']);
    // b's events were answered while a-1 was still retrying.
    expect(fast.received[1]!.at).toBeLessThanOrEqual(slow.received[3]!.at);
  });

  it('stops within the grace period: an answer in flight is kept, a hanging one and the queued events are abandoned', async () => {
    const target = await receiver((n) => (n === 1 ? 204 : 'hang'));
    const { queue, finals, reports } = queueTo(target.url);
    queue.push(event('e-1'));
    await finals(1);
    queue.push(event('e-2'));
    queue.push(event('e-3'));
    while (target.received.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await queue.stop(200);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(reports.map((r) => [r.event.id, r.outcome])).toEqual([
      ['e-1', 'delivered'],
      ['e-2', 'abandoned'],
      ['e-3', 'abandoned'],
    ]);
    queue.push(event('e-4'));
    expect(queue.pending).toBe(0);
  });

  it('at stop, a retry that is waiting is abandoned at once', async () => {
    const target = await receiver(() => 503);
    const reports: ForwardReport[] = [];
    const queue = new DestinationQueue({
      url: target.url,
      secret: SECRET,
      headers: {},
      retries: 5,
      report: (report) => reports.push(report),
      delay: () => 60_000,
    });
    queue.push(event('e-1'));
    while (!reports.length) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await queue.stop(5000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(reports.map((r) => r.outcome)).toEqual(['retrying', 'abandoned']);
  });
});
