import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createWebhookClient,
  MAX_RESPONSE_BYTES,
  SNIPPET_CHARS,
  type PostResult,
  type WebhookClient,
} from './safe-fetch.js';

/**
 * Faulty receivers against the real delivery client and real sockets on 127.0.0.1: receivers that
 * reset the connection, send an endless or dripping body, redirect, or accept and say nothing.
 * Each attempt ends within the timeout (most far sooner) with the error the delivery log shows,
 * and an attempt to a healthy receiver is not slowed by the faulty ones in flight.
 */

const TIMEOUT = 800;
/** Slack for a loaded two-core machine on top of the timeout. */
const MARGIN = 700;
/**
 * The least an attempt ended by the timeout can have taken, by performance.now(): half of it. Node
 * schedules a timer from the event loop's cached time, which lags when the loop was busy just
 * before, so on a loaded machine the timeout fires early by that lag (CI saw 628 ms of 800). Half
 * still tells an attempt that waited for the timeout from one that failed at once.
 */
const EARLIEST = TIMEOUT / 2;
/** "Well under the timeout": what an attempt that ends on its own must stay below. */
const QUICK = TIMEOUT / 2;

const servers: (Server | NetServer)[] = [];
const sockets = new Set<Socket>();
const clients: WebhookClient[] = [];
const timers = new Set<NodeJS.Timeout>();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const every = (ms: number, fn: () => void) => {
  const timer = setInterval(fn, ms);
  timers.add(timer);
  return () => {
    clearInterval(timer);
    timers.delete(timer);
  };
};

async function listen<S extends Server | NetServer>(server: S): Promise<string> {
  servers.push(server);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const http = (handler: (req: IncomingMessage, res: ServerResponse) => void) => listen(createHttpServer(handler));
const tcp = (handler: (socket: Socket) => void) => listen(createNetServer(handler));

const client = (connections?: number) => {
  const made = createWebhookClient({ timeoutMs: TIMEOUT, allowInsecure: true, connections });
  clients.push(made);
  return made;
};
/** One attempt, with the wall-clock time the caller waited as well as the logged duration. */
async function attempt(c: WebhookClient, url: string): Promise<PostResult & { waitedMs: number }> {
  const started = performance.now();
  const result = await c.post(url, '{"event":"x"}', {});
  return { ...result, waitedMs: performance.now() - started };
}
/** Resolves when the server side of a connection has closed, with the time it took from `since`. */
const closedAfter = (socket: Socket, since: number) =>
  new Promise<number>((resolve) =>
    socket.destroyed
      ? resolve(performance.now() - since)
      : socket.once('close', () => resolve(performance.now() - since)),
  );

afterEach(async () => {
  for (const timer of timers) clearInterval(timer);
  timers.clear();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(servers.splice(0).map((server) => new Promise((r) => server.close(r))));
});
afterAll(() => {
  expect(sockets.size).toBe(0);
});

describe('receiver faults: each attempt ends within the timeout, with the error the log shows', () => {
  it('a receiver that resets the connection before answering: connection_error, at once', async () => {
    let requests = 0;
    const httpUrl = await http((req) => {
      requests++;
      req.socket.resetAndDestroy();
    });
    // And one that resets as soon as it accepts, before reading the request.
    const tcpUrl = await tcp((socket) => void socket.resetAndDestroy());
    const c = client();
    for (const url of [httpUrl, tcpUrl]) {
      const result = await attempt(c, `${url}/hook`);
      expect(result, url).toMatchObject({ statusCode: null, error: 'connection_error', snippet: null });
      expect(result.durationMs, url).toBeLessThan(QUICK);
      expect(result.waitedMs, url).toBeLessThan(QUICK);
    }
    // Sent once: a POST is not replayed on another connection behind the log's back.
    expect(requests).toBe(1);
  });

  it('a receiver that sends its status then resets mid-body: the status counts, the snippet is what arrived', async () => {
    const url = await http((req, res) => {
      const status = Number(req.url!.slice(1));
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.write('partial answer', () => setTimeout(() => req.socket.resetAndDestroy(), 50));
    });
    const c = client();
    // The status line arrived in time: a 200 is a delivery, a 500 a failure to retry, whatever
    // happens to the rest of the body (which is read only for the log, best effort).
    const ok = await attempt(c, `${url}/200`);
    expect(ok).toMatchObject({ statusCode: 200, error: null, snippet: 'partial answer' });
    const failed = await attempt(c, `${url}/500`);
    expect(failed).toMatchObject({ statusCode: 500, error: 'http_status', snippet: 'partial answer' });
    for (const result of [ok, failed]) {
      expect(result.durationMs).toBeLessThan(QUICK);
      expect(result.waitedMs).toBeLessThan(QUICK);
    }
  });

  it('an endless body: the client reads only its start and hangs up, long before the timeout', async () => {
    const sent: number[] = [];
    const closed: Promise<number>[] = [];
    const chunk = Buffer.alloc(16 * 1024, 'x');
    let started = 0;
    const url = await http((req, res) => {
      const i = sent.push(0) - 1;
      closed.push(closedAfter(req.socket, started));
      res.writeHead(Number(req.url!.slice(1)), { 'content-type': 'text/plain' });
      // Write as fast as the connection takes it, forever (until the socket closes).
      const pump = () => {
        while (!res.destroyed && !res.writableEnded) {
          sent[i]! += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('error', () => {});
      pump();
    });
    const c = client();
    for (const [n, status, error] of [
      [0, 200, null],
      [1, 503, 'http_status'],
    ] as const) {
      started = performance.now();
      const result = await attempt(c, `${url}/${status}`);
      expect(result).toMatchObject({ statusCode: status, error, snippet: 'x'.repeat(SNIPPET_CHARS) });
      expect(result.durationMs).toBeLessThan(QUICK);
      expect(result.waitedMs).toBeLessThan(QUICK);
      // The client hung up after the first MAX_RESPONSE_BYTES: the receiver's connection closed
      // soon after the request began, not at the timeout, and it stopped being able to write.
      expect(await closed[n]!).toBeLessThan(QUICK);
      const atClose = sent[n]!;
      await sleep(200);
      expect(sent[n]).toBe(atClose);
      // What it managed to write is bounded by socket buffers, not by the timeout's worth of a
      // loopback link (gigabytes): the client did not keep downloading.
      expect(atClose).toBeLessThan(64 * 1024 * 1024);
    }
    expect(MAX_RESPONSE_BYTES).toBeLessThan(chunk.length);
  });

  it('a body that drips one byte every 200 ms, forever: the attempt ends at the timeout with what arrived', async () => {
    let started = 0;
    let closed: Promise<number> | undefined;
    const url = await http((req, res) => {
      closed = closedAfter(req.socket, started);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('error', () => {});
      const stop = every(200, () => (res.destroyed ? stop() : void res.write('a')));
      res.write('a');
    });
    const c = client();
    started = performance.now();
    const result = await attempt(c, `${url}/drip`);
    // The status came at once: a delivery; the body, which never ends, is cut at the timeout.
    expect(result).toMatchObject({ statusCode: 200, error: null });
    expect(result.snippet).toMatch(/^a+$/);
    expect(result.snippet!.length).toBeLessThanOrEqual(TIMEOUT / 200 + 1);
    // Timed from its start, the timer from the loop's cached time: see EARLIEST.
    expect(result.durationMs).toBeGreaterThanOrEqual(EARLIEST);
    expect(result.durationMs).toBeLessThan(TIMEOUT + MARGIN);
    expect(result.waitedMs).toBeLessThan(TIMEOUT + MARGIN);
    // And the connection is dropped, not left open for the receiver to keep dripping into.
    expect(await closed!).toBeLessThan(TIMEOUT + MARGIN);
  });

  it('headers that drip one byte every 100 ms, forever: timeout, within the timeout', async () => {
    const url = await tcp((socket) => {
      socket.on('error', () => {});
      const line = 'HTTP/1.1 200 OK\r\nX-Drip: ';
      let i = 0;
      const stop = every(100, () =>
        socket.destroyed ? stop() : void socket.write(i < line.length ? line[i++]! : 'a'),
      );
    });
    const result = await attempt(client(), `${url}/drip-headers`);
    expect(result).toMatchObject({ statusCode: null, error: 'timeout', snippet: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(EARLIEST);
    expect(result.durationMs).toBeLessThan(TIMEOUT + MARGIN);
    expect(result.waitedMs).toBeLessThan(TIMEOUT + MARGIN);
  });

  it('a redirect, whatever its code: redirect_not_followed, and the Location target receives nothing', async () => {
    const targetHits: string[] = [];
    const target = await http((req, res) => {
      targetHits.push(`${req.method} ${req.url}`);
      res.writeHead(200).end('followed');
    });
    const url = await http((req, res) => {
      req.resume();
      const status = Number(req.url!.slice(1));
      res
        .writeHead(status, { location: `${target}/moved-${status}`, 'content-type': 'text/plain' })
        .end(`see ${target}`);
    });
    const c = client();
    for (const status of [301, 302, 303, 307, 308]) {
      const result = await attempt(c, `${url}/${status}`);
      expect(result, String(status)).toMatchObject({ statusCode: status, error: 'redirect_not_followed' });
      expect(result.durationMs, String(status)).toBeLessThan(QUICK);
    }
    await sleep(200);
    expect(targetHits).toEqual([]);
  });

  it('a receiver that accepts the connection and never says anything: timeout, within the timeout', async () => {
    let received = 0;
    let started = 0;
    let closed: Promise<number> | undefined;
    const url = await tcp((socket) => {
      closed = closedAfter(socket, started);
      socket.on('data', (data) => {
        received += data.length;
      });
      socket.on('error', () => {});
    });
    started = performance.now();
    const result = await attempt(client(), `${url}/silent`);
    expect(result).toMatchObject({ statusCode: null, error: 'timeout', snippet: null });
    expect(received).toBeGreaterThan(0); // the request was sent: it is the answer that never came
    expect(result.durationMs).toBeGreaterThanOrEqual(EARLIEST);
    expect(result.durationMs).toBeLessThan(TIMEOUT + MARGIN);
    expect(result.waitedMs).toBeLessThan(TIMEOUT + MARGIN);
    // The abandoned connection is closed, not kept for another request behind a silent receiver.
    expect(await closed!).toBeLessThan(TIMEOUT + MARGIN);
  });

  it('nothing else slows: with 8 attempts hanging or streaming endlessly, an attempt to a healthy receiver answers at once', async () => {
    let inFlight = 0;
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const faulty = await http((req, res) => {
      inFlight++;
      res.on('error', () => {});
      if (req.url === '/fast') return void res.writeHead(204).end();
      if (req.url === '/hang') return; // never answers
      // '/drip': the status, then a byte now and then, forever
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(chunk.subarray(0, 1));
      const stop = every(200, () => (res.destroyed ? stop() : void res.write('x')));
    });
    const silent = await tcp((socket) => {
      inFlight++;
      socket.on('error', () => {});
    });
    const healthy = await http((_req, res) => void res.writeHead(204).end());
    const c = client();
    const slow = [
      ...Array.from({ length: 3 }, () => attempt(c, `${faulty}/hang`)),
      ...Array.from({ length: 3 }, () => attempt(c, `${faulty}/drip`)),
      ...Array.from({ length: 2 }, () => attempt(c, `${silent}/silent`)),
    ];
    // Only once all eight are at their receivers, holding connections.
    const deadline = performance.now() + QUICK;
    while (inFlight < 8 && performance.now() < deadline) await sleep(5);
    expect(inFlight).toBe(8);

    // Another receiver, and the faulty receiver's own origin (a new connection, not a queue
    // behind the stuck ones): both answer well under the timeout.
    for (const url of [`${healthy}/ok`, `${faulty}/fast`, `${healthy}/ok`]) {
      const result = await attempt(c, url);
      expect(result, url).toMatchObject({ statusCode: 204, error: null });
      expect(result.durationMs, url).toBeLessThan(QUICK); // behind the stuck ones it would be TIMEOUT
      expect(result.waitedMs, url).toBeLessThan(QUICK);
    }

    const results = await Promise.all(slow);
    expect(results.map((r) => r.error)).toEqual([
      'timeout',
      'timeout',
      'timeout',
      null,
      null,
      null,
      'timeout',
      'timeout',
    ]);
    for (const result of results) expect(result.waitedMs).toBeLessThan(TIMEOUT + MARGIN);
  });
});
