import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { fetchToken } from '#test-helpers/live-server.js';
import { onTestDatabase, startServerProcess, type ServerProcess } from '#test-helpers/server-process.js';

/**
 * Issue 11, finding 2: unpaged member lists whose readers stop reading must not hold database
 * connections, slow another organization, or stay open for ever. The real server process
 * (`server/dist/start.js`, its own pools and timeouts) on a database of its own.
 */
const MEMBERS = 30_000; // ~15 MB of JSON per list: more than a socket's buffers on both ends
const STALLED = 24; // at least twice the API pool (10)
const SOCKET_TIMEOUT_MS = 6000;

let db: TestDatabase;
let server: ServerProcess;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-big', 'org-acme', 'Big')`;
  await db.sql`
    WITH m AS (
      INSERT INTO members (organization_id, email, first_name, last_name, street, city)
      SELECT 'org-acme', 'big-' || i || '@example.org', 'First ' || i, 'Last ' || i, repeat('Long Street Name ', 12), 'Amsterdam'
      FROM generate_series(1, ${MEMBERS}) i
      RETURNING id
    )
    INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-big', id FROM m`;
  server = await startServerProcess({
    ...onTestDatabase(db.url),
    LOYALTY_SOCKET_TIMEOUT_MS: String(SOCKET_TIMEOUT_MS),
    LOYALTY_REQUEST_TIMEOUT_MS: '2000',
    LOYALTY_STREAMS_PER_TOKEN: '2',
  });
}, 180_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

type Stalled = { socket: Socket; text: () => string; closed: Promise<void> };

/** Sends an unpaged POST /members/list and never reads the response. */
function stalledList(url: string, token: string): Stalled {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const body = JSON.stringify({ brand_id: 'brand-big' });
  socket.write(
    `POST /members/list HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${token}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.pause(); // after 'data' is attached, which would resume it
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, text: () => Buffer.concat(chunks).toString('latin1'), closed };
}

/** Established TCP connections (Linux /proc/net/tcp*) from the server's port to any of `clientPorts`. */
function establishedFrom(serverPort: number, clientPorts: Set<number>): number {
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      if (!local || state !== '01') continue;
      if (parseInt(local.split(':')[1]!, 16) === serverPort && clientPorts.has(parseInt(remote!.split(':')[1]!, 16)))
        n++;
    }
  }
  return n;
}

async function until(done: () => boolean, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return Infinity;
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now();
}

async function timed(url: string, token: string, method: string, path: string, body?: unknown): Promise<number> {
  const started = performance.now();
  try {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(3000),
    });
    await res.arrayBuffer();
    if (res.status >= 300) return Infinity;
  } catch {
    return Infinity; // timed out: the other tenant is starved
  }
  return performance.now() - started;
}

describe('stalled readers of streamed member lists', () => {
  it('hold no database connection, do not slow another organization, and are cut off', async () => {
    // STALLED / 2 tokens of one client, two readers each: the client's two streams stall, the others
    // are refused (429, issue 25: slots are per client) and stay open, idle, until the socket timeout.
    const tokens = await Promise.all(Array.from({ length: STALLED / 2 }, () => fetchToken(server.url, 'acme-admin')));
    const started = Date.now();
    const stalled = tokens.flatMap((token) => [stalledList(server.url, token), stalledList(server.url, token)]);
    await new Promise((r) => setTimeout(r, 500));
    // A third stream of one token is refused at once; it never queues.
    const third = await fetch(`${server.url}/members/list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ brand_id: 'brand-big' }),
      signal: AbortSignal.timeout(3000),
    });
    expect(third.status, server.stderr()).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await third.json()).toMatchObject({ message: expect.stringMatching(/streamed lists/) });

    // Let every list fill the buffers between the server and the stalled reader.
    await new Promise((r) => setTimeout(r, 2000));

    const [held] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'loyalty%' AND xact_start < now() - interval '1 second'`;
    expect(held!.n, 'connections in a transaction for over a second while readers stall').toBe(0);

    const globex = await Promise.race([
      fetchToken(server.url, 'globex-admin'),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no token for another organization within 3 s')), 3000),
      ),
    ]);
    const latencies: number[] = [];
    for (let i = 0; i < 30; i++) {
      latencies.push(await timed(server.url, globex, 'GET', '/tags?brand_id=brand-globex'));
      latencies.push(
        await timed(server.url, globex, 'POST', '/members', {
          brand_id: 'brand-globex',
          email: `fair-${i}@example.org`,
        }),
      );
      latencies.push(await timed(server.url, globex, 'GET', '/events'));
      if (latencies.includes(Infinity)) break;
    }
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    expect(p99, `p99 of another organization's requests (ms), of ${latencies.length}`).toBeLessThan(1000);

    // The server gives up on readers that take nothing for SOCKET_TIMEOUT_MS: their connections
    // leave the kernel's table (a paused client socket would not notice by itself).
    const ports = new Set(stalled.map((s) => s.socket.localPort!));
    const serverPort = Number(new URL(server.url).port);
    const cutOff = await until(() => establishedFrom(serverPort, ports) === 0, SOCKET_TIMEOUT_MS + 30_000);
    expect(cutOff - started).toBeLessThan(SOCKET_TIMEOUT_MS + 30_000);
    for (const s of stalled) s.socket.resume();
    await Promise.all(stalled.map((s) => Promise.race([s.closed, new Promise((r) => setTimeout(r, 5000))])));
    const whole = stalled.filter((s) => s.text().endsWith(']}}\r\n0\r\n\r\n'));
    expect(whole.length, 'lists delivered whole after their reader was cut off').toBe(0);
  });
});
