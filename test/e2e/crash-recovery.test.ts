import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { freePort } from '../../server/src/db/embedded.js';
import { createPool, type Sql } from '../../server/src/db/pool.js';
import { cliSandbox, describeRun } from '#test-helpers/cli.js';
import { fetchToken } from '#test-helpers/live-server.js';
import {
  hasExited,
  isRunning,
  postmasterPidOf,
  startServerProcess,
  type ServerProcess,
} from '#test-helpers/server-process.js';

/**
 * Issue 12: `kill -9` of the server and of its embedded PostgreSQL, mid voucher job and mid webhook
 * attempt, as `npm start` runs them (one server process, its own data directory). After each,
 * the server comes back (by itself when only PostgreSQL died; with the next start on the same data
 * directory when the server died) and every effect happens exactly once: one pass and one grant per
 * member, one delivery per event, every delivery delivered.
 */
/**
 * A voucher job of three rounds (5,000 members each), every round held open 1 s by a trigger of
 * this test's (SLOW_ROUNDS): the kill lands in the middle of the job at a fixed point (after the
 * first round, with two to go), without a job of tens of thousands of members to make it last.
 */
const MEMBERS = 15_000;
const SLOW_ROUNDS = `
  CREATE FUNCTION test_slow_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(TG_ARGV[0]::float); RETURN NULL; END $$;
  CREATE TRIGGER test_slow_round AFTER INSERT ON voucher_grants FOR EACH STATEMENT EXECUTE FUNCTION test_slow_statement('1');`;
/** Every batch of an import held open 0.2 s: 20 batches of 100 rows last 4 s, long enough to kill the server mid-import. */
const SLOW_IMPORT = `CREATE TRIGGER test_slow_import AFTER INSERT ON brand_members FOR EACH STATEMENT EXECUTE FUNCTION test_slow_statement('0.2');`;
const ENV = {
  LOYALTY_STALLED_JOB_SECONDS: '2', // what a killed worker left is taken over after 2 s, not a minute
  LOYALTY_IDEMPOTENCY_LOCK_SECONDS: '3', // and a batch in flight at the kill holds its Idempotency-Key for 3 s, not 30
  LOYALTY_RATE_LIMIT_TOKEN: '1000000',
  LOYALTY_RATE_LIMIT_IP: '1000000',
  LOYALTY_WEBHOOK_ALLOW_INSECURE: '1',
  LOYALTY_WEBHOOK_RETRY_DELAYS: '1,1,1,1,1,1,1',
  LOYALTY_WEBHOOK_TIMEOUT_MS: '3000',
};
let dir: string;
let dataDir: string;
let server: ServerProcess | undefined;
let stderrBefore = ''; // of the server process killed last
let token = '';
let port = 0; // the same at every start: the CLI keeps its URL

const start = async () => {
  server = await startServerProcess({ ...ENV, LOYALTY_DATA_DIR: dataDir, PORT: String(port) });
  token = await fetchToken(server.url, 'acme-admin');
  return server;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const postmasterPid = () => postmasterPidOf(dataDir);

/** A connection of this test to the server's embedded PostgreSQL: its socket and password are in the data directory. */
async function database<T>(use: (sql: Sql) => Promise<T>): Promise<T> {
  const password = (await readFile(path.join(dataDir, 'loyalty-db-password'), 'utf8')).trim();
  const sql = createPool(
    `postgres://postgres:${encodeURIComponent(password)}@${encodeURIComponent(dataDir)}:5432/loyalty`,
    { max: 2 },
  );
  try {
    return await use(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function api(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server!.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

async function startVoucherJob(tag: string, couponId: string): Promise<string> {
  const res = await api('POST', `/tags/${tag}/vouchers`, { brand_id: 'brand-acme', coupon_id: couponId });
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  return res.json.job_id as string;
}

/** The job's status, polled until `until` holds (requests during an outage may fail: polled again). */
async function jobUntil(tag: string, jobId: string, until: (job: any) => boolean, timeoutMs: number): Promise<any> {
  let last: unknown;
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(25)) {
    const res = await api('GET', `/tags/${tag}/vouchers/${jobId}?brand_id=brand-acme`).catch((error: unknown) => ({
      status: 0,
      json: String(error),
    }));
    last = res.json;
    if (res.status === 200 && until(res.json)) return res.json;
  }
  throw new Error(`voucher job ${jobId} not there within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

/** Exactly once: one pass and one grant per member of the tag, and one coupon.issued event per pass. */
async function effectsOf(couponId: string) {
  return database(async (sql) => {
    const [passes] =
      await sql`SELECT count(*)::int AS n, count(DISTINCT member_id)::int AS members FROM passes WHERE coupon_id = ${couponId}`;
    const [grants] =
      await sql`SELECT count(*)::int AS n FROM voucher_grants WHERE voucher_id = ${couponId} AND status = 'issued'`;
    const [events] = await sql`
      SELECT count(*)::int AS n, count(DISTINCT data->>'pass_id')::int AS passes FROM events
      WHERE type = 'coupon.issued' AND data->>'coupon_id' = ${couponId}`;
    return {
      passes: passes!.n,
      members: passes!.members,
      grants: grants!.n,
      events: events!.n,
      eventPasses: events!.passes,
    };
  });
}
const once = (n: number) => ({ passes: n, members: n, grants: n, events: n, eventPasses: n });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-crash-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres`, which must reach the data directory
  dataDir = path.join(dir, 'data');
  port = await freePort();
  await start();
  await database(async (sql) => {
    await sql`
      INSERT INTO coupons (id, organization_id, brand_id, title, valid_days, active)
      SELECT 'coupon-crash-' || n, 'org-acme', 'brand-acme', 'Crash coupon ' || n, 30, true FROM generate_series(1, 4) n`;
    const [big] =
      await sql`INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES ('org-acme', 'brand-acme', 'Crash', 'crash') RETURNING id`;
    const [small] =
      await sql`INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES ('org-acme', 'brand-acme', 'Crash small', 'crash-small') RETURNING id`;
    await sql`
      WITH m AS (
        INSERT INTO members (organization_id, email)
        SELECT 'org-acme', 'crash-' || i || '@example.test' FROM generate_series(1, ${MEMBERS}::int) i RETURNING id, email
      ), bm AS (INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-acme', id FROM m)
      INSERT INTO tag_members (tag_id, member_id)
      SELECT ${big!.id}::uuid, id FROM m UNION ALL SELECT ${small!.id}::uuid, id FROM m WHERE email ~ '^crash-[0-9]@'`;
    await sql`VACUUM ANALYZE`;
    // unsafe: static DDL of several statements, which the extended protocol cannot send at once.
    await sql.unsafe(SLOW_ROUNDS);
  });
}, 240_000);

beforeEach(() => onTestFailed(() => console.error(`server stderr:\n${stderrBefore}${server?.stderr()}`)));

afterAll(async () => {
  receiver?.close();
  if (server) process.kill(server.child.pid!, 'SIGTERM');
  await server?.exited;
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe('kill -9 of the embedded PostgreSQL', () => {
  it('mid voucher job: the server starts it again by itself, answers 503 meanwhile, and the job finishes with every pass issued once', async () => {
    const jobId = await startVoucherJob('crash', 'coupon-crash-1');
    const before = await jobUntil('crash', jobId, (job) => job.issued > 0, 30_000);
    const pid = await postmasterPid();
    process.kill(pid, 'SIGKILL');
    expect(before.issued).toBeLessThan(MEMBERS); // killed in the middle, not after the end
    const during = await api('GET', '/tags').catch(() => ({ status: 0, json: null }));
    expect([200, 503]).toContain(during.status); // 200 only when it was back already; never a 500

    const done = await jobUntil('crash', jobId, (job) => job.status === 'done', 90_000);
    expect(done).toMatchObject({ total: MEMBERS, issued: MEMBERS, failed: 0 });
    expect(await effectsOf('coupon-crash-1')).toEqual(once(MEMBERS));
    expect(await postmasterPid()).not.toBe(pid);
    expect(server!.stderr()).toMatch(
      /embedded PostgreSQL .* exited unexpectedly \(signal SIGKILL\); starting it again/,
    );
    expect(server!.stderr()).toMatch(/embedded PostgreSQL .* is running again/);
    expect((await fetch(`${server!.url}/health/ready`)).status).toBe(200);
  }, 150_000);
});

describe('kill -9 of the server', () => {
  it('mid voucher job, leaving PostgreSQL running: the next start stops that PostgreSQL, and the job finishes with every pass issued once', async () => {
    const jobId = await startVoucherJob('crash', 'coupon-crash-2');
    const before = await jobUntil('crash', jobId, (job) => job.issued > 0, 30_000);
    const pid = await postmasterPid();
    server!.child.kill('SIGKILL');
    await server!.exited;
    expect(before.issued).toBeLessThan(MEMBERS);
    expect(isRunning(pid)).toBe(true); // PostgreSQL outlived the server
    stderrBefore = server!.stderr();

    await start();
    expect(server!.stderr()).toMatch(new RegExp(`stopping the PostgreSQL \\(pid ${pid}\\)`));
    const done = await jobUntil('crash', jobId, (job) => job.status === 'done', 90_000);
    expect(done).toMatchObject({ total: MEMBERS, issued: MEMBERS, failed: 0 });
    expect(await effectsOf('coupon-crash-2')).toEqual(once(MEMBERS));
  }, 150_000);

  it('and of its PostgreSQL together, mid voucher job: the next start recovers the database and the job finishes exactly once', async () => {
    const jobId = await startVoucherJob('crash', 'coupon-crash-3');
    await jobUntil('crash', jobId, (job) => job.issued > 0, 30_000);
    const pid = await postmasterPid();
    process.kill(pid, 'SIGKILL');
    server!.child.kill('SIGKILL');
    await server!.exited;
    stderrBefore = server!.stderr();
    for (const deadline = Date.now() + 10_000; !hasExited(pid) && Date.now() < deadline; ) await sleep(50);

    await start();
    const done = await jobUntil('crash', jobId, (job) => job.status === 'done', 90_000);
    expect(done).toMatchObject({ total: MEMBERS, issued: MEMBERS, failed: 0 });
    expect(await effectsOf('coupon-crash-3')).toEqual(once(MEMBERS));
  }, 150_000);
});

let receiver: HttpServer | undefined;

describe('kill -9 of the server mid webhook attempt', () => {
  it('sends every delivery again after the next start: one delivery per event, all delivered, repeats only of the interrupted attempts (same webhook-id)', async () => {
    const seen: string[] = [];
    const held: ServerResponse[] = [];
    let holding = true; // until the kill, the receiver answers nothing: attempts stay in flight
    receiver = createHttpServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(String(req.headers['webhook-id']));
        if (holding) held.push(res);
        else res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const sub = await api('POST', '/webhook-subscriptions', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['coupon.issued'],
    });
    expect(sub.status, JSON.stringify(sub.json)).toBe(201);

    const jobId = await startVoucherJob('crash-small', 'coupon-crash-4');
    const done = await jobUntil('crash-small', jobId, (job) => job.status === 'done', 30_000);
    for (const deadline = Date.now() + 20_000; seen.length === 0 && Date.now() < deadline; ) await sleep(25);
    expect(seen.length).toBeGreaterThan(0); // attempts in flight at the kill
    server!.child.kill('SIGKILL');
    await server!.exited;
    stderrBefore = server!.stderr();
    const interrupted = new Set(seen);
    holding = false;
    for (const res of held) res.destroy();

    await start();
    const events = done.issued as number;
    const deliveries = async () =>
      database(
        (sql) => sql`
        SELECT d.status, count(*)::int AS n, count(DISTINCT d.event_id)::int AS events FROM webhook_deliveries d
        JOIN events e ON e.id = d.event_id WHERE e.data->>'coupon_id' = 'coupon-crash-4' GROUP BY d.status`,
      );
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(250)) {
      const rows = await deliveries();
      // Every event's delivery exists (a fan-out the kill interrupted runs again after the start) and is delivered.
      if (rows.length === 1 && rows[0]!.status === 'delivered' && rows[0]!.events === events) break;
    }
    expect(await deliveries()).toEqual([{ status: 'delivered', n: events, events }]);
    const ids = new Set(seen);
    expect(ids.size).toBe(events); // every event reached the receiver
    const repeats = seen.filter((id, i) => seen.indexOf(id) !== i);
    for (const id of repeats)
      expect(interrupted.has(id), `${id} was sent twice but not in flight at the kill`).toBe(true);
  }, 150_000);
});

describe('kill -9 of the server mid import batch', () => {
  it('the CLI carries on (or --resume does) once the server is back: every row once', async () => {
    const ROWS = 2_000;
    await database((sql) => sql.unsafe(SLOW_IMPORT));
    const cli = await cliSandbox(server!.url);
    try {
      const csv = [
        'email,first_name',
        ...Array.from({ length: ROWS }, (_, i) => `import-crash-${i}@example.org,Row${i}`),
      ].join('\n');
      await writeFile(path.join(cli.dir, 'members.csv'), `${csv}\n`);
      const args = ['members', 'import', 'members.csv', '--batch-size', '100', '--checkpoint', 'checkpoint.json'];
      const first = cli.spawn(args, { timeoutMs: 120_000 });
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(5)) {
        const state = await readFile(path.join(cli.dir, 'checkpoint.json'), 'utf8').then(JSON.parse, () => undefined);
        if (state && Object.keys(state.acknowledged).length >= 1) break;
      }
      expect(first.child.exitCode, 'the import ended before the kill').toBe(null);
      server!.child.kill('SIGKILL'); // batches in flight die with it
      await server!.exited;
      stderrBefore = server!.stderr();
      await sleep(500);
      await start();
      let outcome = await first.exited;
      if (outcome.code !== 0) outcome = await cli.run([...args, '--resume'], { timeoutMs: 120_000 }); // the CLI gave up meanwhile
      expect(outcome.code, describeRun(outcome)).toBe(0);
      const [row] = await database(
        (sql) => sql`
        SELECT count(*)::int AS n, count(DISTINCT lower(m.email))::int AS emails FROM brand_members bm JOIN members m ON m.id = bm.member_id
        WHERE bm.brand_id = 'brand-acme' AND m.email LIKE 'import-crash-%'`,
      );
      expect(row).toEqual({ n: ROWS, emails: ROWS });
    } finally {
      await cli.cleanup();
    }
  }, 240_000);
});
