// Soak (issue 14 item 7): the real server process (`node server/dist/start.js`, embedded
// PostgreSQL in a temp directory, worker in the process) under a mixed workload for SOAK_SECONDS
// (default 300), with a fast retention period (LOYALTY_RETENTION_DAYS = 60 s), a cycle every 3 s
// at most (SOAK_CYCLE_MS):
//   - every cycle: 200 sign-ups (member.created), a tag of those members, a voucher job on it
//     (coupon.issued), then the members and the tag deleted again;
//   - one subscription to both events, answered by a local receiver (deliveries, attempts);
//   - 4 readers looping over GET /tags, GET /health/ready and a member's GET;
//   - a new access token and an idempotent POST every cycle.
// It prints the rows and on-disk size of the tables retention governs, the server's RSS, the
// pending deliveries and the event-to-receipt latency (p50/p99 of the deliveries received since the
// previous snapshot), after the warm-up (90 s), in the middle and at the end; the end must stay
// within 10 % of the middle (the warm-up fills the retention window first), and once the workload
// stops every delivery must arrive (0 pending). Exit 1 when it does not.
//
// The load generator must never be what it measures (issue 30: this bench once scanned the server's
// whole stdout on every chunk and reported a collapse that was its own). So the receiver and the
// readers run in processes of their own, the server's output goes to a file the bench does not read
// while it runs (lib/server-process.mjs), and the CPU share of every load process is printed, with a
// warning when one of them used more than LOAD_CPU_WARN of a core.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientToken } from './lib/admin-token.mjs';

/** A load process past this share of one core may be the bottleneck: the run says so. */
const LOAD_CPU_WARN = 0.6;

/** p-th percentile (0–100) of sorted numbers; undefined for none. */
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

if (process.argv[2] === 'receiver') {
  // The receiver: counts requests and distinct events, and the time from each event's created_at
  // to its receipt; `report` answers the window since the previous report.
  const { createServer } = await import('node:http');
  let received = 0;
  const events = new Set();
  let window = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received++;
      events.add(req.headers['loyalty-message-id']);
      try {
        window.push(Date.now() - Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).created_at));
      } catch {
        // not an envelope: counted, no latency
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () =>
    process.send?.({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }),
  );
  process.on('message', (m) => {
    if (m !== 'report') return;
    const sorted = window.sort((a, b) => a - b);
    process.send?.({ received, events: events.size, p50: percentile(sorted, 50), p99: percentile(sorted, 99) });
    window = [];
  });
} else if (process.argv[2] === 'readers') {
  // The readers: 4 loops over GET /tags, GET /health/ready and a member's GET until told to stop.
  const url = /** @type {string} */ (process.argv[3]);
  const bearer = await clientToken(url, 'acme-admin');
  let member;
  let reads = 0;
  let errors = 0;
  let running = true;
  const get = async (route, auth = true) => {
    const res = await fetch(`${url}${route}`, { headers: auth ? { authorization: `Bearer ${bearer}` } : {} });
    await res.arrayBuffer();
    if (res.status >= 500) errors++;
    reads++;
  };
  const loop = async () => {
    while (running) {
      await get('/tags?brand_id=brand-acme');
      await get('/health/ready', false);
      if (member) await get(`/members/${member}?brand_id=brand-acme`);
    }
  };
  const loops = Array.from({ length: 4 }, loop);
  process.on('message', async (m) => {
    if (m && typeof m === 'object' && 'member' in m) member = m.member;
    if (m === 'report') process.send?.({ reads, errors });
    if (m === 'stop') {
      running = false;
      await Promise.all(loops);
      process.send?.({ reads, errors });
      process.exit(0);
    }
  });
  process.send?.({ ready: true });
} else {
  await main();
}

/** Forks this file with `role` (and more arguments); `ask` sends a message and resolves with the next answer. */
async function forkRole(role, ...args) {
  const child = fork(fileURLToPath(import.meta.url), [role, ...args], { stdio: 'inherit' });
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      if (message !== undefined) child.send(message);
    });
  const ready = await ask();
  return { child, ready, ask };
}

async function main() {
  const { createPool } = await import('./lib/server-dist.mjs');
  const { startServerProcess } = await import('./lib/server-process.mjs');
  const { treeCpuMs } = await import('./lib/proc-cpu.mjs');
  const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
  const RETENTION_SECONDS = 60;
  // The retention window fills, and the first purges (every quarter of it) run, before sizes are compared.
  const WARMUP = Math.min(RETENTION_SECONDS * 1.5, SECONDS / 3);
  const TOLERANCE = 0.1;
  /** A cycle starts at most this often: a workload the machine sustains (a growing delivery backlog is not retention's to purge). */
  const CYCLE_MS = Number(process.env.SOAK_CYCLE_MS ?? 3000);
  /** Once the workload stops, every pending delivery must arrive within this long. */
  const DRAIN_SECONDS = 60;
  const TABLES = [
    'events',
    'webhook_deliveries',
    'webhook_attempts',
    'voucher_jobs',
    'voucher_grants',
    'passes',
    'members',
    'tags',
    'access_tokens',
    'idempotency_keys',
    'graphile_worker._private_jobs',
  ];

  const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-soak-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
  const dataDir = path.join(dir, 'data');

  const receiver = await forkRole('receiver');
  const server = await startServerProcess({
    logFile: path.join(dir, 'server.log'),
    env: {
      LOYALTY_DATA_DIR: dataDir,
      LOYALTY_RETENTION_DAYS: String(RETENTION_SECONDS / 86_400),
      LOYALTY_WEBHOOK_ALLOW_INSECURE: '1',
      LOYALTY_RATE_LIMIT_TOKEN: '1000000',
      LOYALTY_RATE_LIMIT_IP: '1000000',
      LOYALTY_WEBHOOK_RETRY_DELAYS: '1,1,1,1,1,1,1',
    },
  });
  const { url } = server;
  const password = (await readFile(path.join(dataDir, 'loyalty-db-password'), 'utf8')).trim();
  const sql = createPool(
    `postgres://postgres:${encodeURIComponent(password)}@${encodeURIComponent(dataDir)}:5432/loyalty`,
    { max: 2 },
  );

  let bearer = await clientToken(url, 'acme-admin');
  async function api(method, route, body, headers = {}) {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 500) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  const subscription = await api('POST', '/webhook-subscriptions', {
    url: `http://127.0.0.1:${receiver.ready.port}/hook`,
    events: ['member.created', 'coupon.issued'],
  });
  if (subscription.status !== 201) throw new Error(`subscription: ${JSON.stringify(subscription.json)}`);
  const readers = await forkRole('readers', url);

  const started = Date.now();
  const elapsed = () => (Date.now() - started) / 1000;
  const cpuAtStart = {
    bench: process.cpuUsage(),
    receiver: treeCpuMs(/** @type {number} */ (receiver.child.pid)),
    readers: treeCpuMs(/** @type {number} */ (readers.child.pid)),
    server: treeCpuMs(server.pid),
  };
  let cycles = 0;

  async function cycle(n) {
    bearer = await clientToken(url, 'acme-admin');
    const emails = Array.from({ length: 200 }, (_, i) => `soak-${n}-${i}@example.org`);
    await api(
      'POST',
      '/members/signups',
      { brand_id: 'brand-acme', users: emails.map((email) => ({ email })) },
      { 'idempotency-key': `soak-signups-${n}` },
    );
    const ids = (await sql`SELECT id FROM members WHERE email LIKE ${`soak-${n}-%`}`).map((r) => r.id);
    readers.child.send({ member: ids[0] });
    const tag = `soak-${n}`;
    const created = await api('POST', '/tags', { brand_id: 'brand-acme', external_reference: tag, tag: `Soak ${n}` });
    await api('POST', '/tags/members/bulk', { brand_id: 'brand-acme', tag_id: tag, users: ids });
    const job = await api('POST', `/tags/${tag}/vouchers`, { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    for (let status = job.json.status; status !== 'done' && status !== 'failed'; ) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await api('GET', `/tags/${tag}/vouchers/${job.json.job_id}?brand_id=brand-acme`)).json.status;
    }
    for (let i = 0; i < ids.length; i += 20)
      await Promise.all(ids.slice(i, i + 20).map((id) => api('DELETE', `/members/${id}?brand_id=brand-acme`)));
    const removed = await api('DELETE', '/tags', { tag_id: created.json.data.uuid, brand_id: 'brand-acme' }); // by uuid: a tag's grants go with it
    if (removed.status !== 200) throw new Error(`DELETE /tags: ${removed.status} ${JSON.stringify(removed.json)}`);
  }

  const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  const pendingNow = async () =>
    (await sql`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`)[0]?.pending;
  async function snapshot(label) {
    const rows = {};
    for (const table of TABLES) {
      const [r] = await sql.unsafe(
        `SELECT count(*)::int AS n, pg_total_relation_size('${table}')::bigint AS bytes FROM ${table}`,
      );
      rows[table] = { n: r.n, mb: Number(r.bytes) / 2 ** 20 };
    }
    const pending = await pendingNow();
    const latency = await receiver.ask('report');
    return { label, at: elapsed(), rss: rssOf(server.pid), rows, pending, latency };
  }

  const snapshots = [];
  const cycles$ = (async () => {
    while (elapsed() < SECONDS) {
      const began = Date.now();
      await cycle(cycles++);
      await new Promise((r) => setTimeout(r, Math.max(0, CYCLE_MS - (Date.now() - began))));
    }
  })();
  /** @type {Array<[string, number]>} */
  const marks = [
    ['after warm-up', WARMUP],
    ['middle', (WARMUP + SECONDS) / 2],
    ['end', SECONDS],
  ];
  for (const [label, at] of marks) {
    await new Promise((r) => setTimeout(r, Math.max(0, (at - elapsed()) * 1000)));
    snapshots.push(await snapshot(label));
  }
  await cycles$;
  const { reads, errors: readErrors } = await readers.ask('stop');
  const seconds = elapsed();
  const cpuShare = {
    bench: (() => {
      const used = process.cpuUsage(cpuAtStart.bench);
      return (used.user + used.system) / 1000 / (seconds * 1000);
    })(),
    receiver: (treeCpuMs(/** @type {number} */ (receiver.child.pid)) - cpuAtStart.receiver) / (seconds * 1000),
    readers: (treeCpuMs(/** @type {number} */ (readers.child.pid)) - cpuAtStart.readers) / (seconds * 1000),
    server: (treeCpuMs(server.pid) - cpuAtStart.server) / (seconds * 1000),
  };

  // The workload has stopped: every delivery it caused must now arrive.
  const drainStarted = Date.now();
  let pendingAfter = await pendingNow();
  while (pendingAfter > 0 && Date.now() - drainStarted < DRAIN_SECONDS * 1000) {
    await new Promise((r) => setTimeout(r, 500));
    pendingAfter = await pendingNow();
  }
  const drainSeconds = (Date.now() - drainStarted) / 1000;
  const final = await receiver.ask('report');
  const [{ events: eventsSubscribed }] = await sql`
    SELECT count(*)::int AS events FROM events WHERE type IN ('member.created', 'coupon.issued')`;

  console.log(
    `soak: ${SECONDS} s, retention ${RETENTION_SECONDS} s, ${cycles} cycles of 200 sign-ups + voucher job + deletes, ` +
      `${reads} reads (${readErrors} 5xx), ${final.received} webhook requests received (${final.events} distinct events)`,
  );
  const column = (text) => text.padStart(26);
  console.log(`${'table'.padEnd(30)} ${snapshots.map((s) => column(`${s.label} (${s.at.toFixed(0)} s)`)).join('')}`);
  for (const table of TABLES) {
    console.log(
      `${table.padEnd(30)} ${snapshots.map((s) => column(`${s.rows[table].n} rows ${s.rows[table].mb.toFixed(1)} MB`)).join('')}`,
    );
  }
  console.log(`${'  of which pending deliveries'.padEnd(30)} ${snapshots.map((s) => column(`${s.pending}`)).join('')}`);
  console.log(
    `${'event-to-receipt p50 / p99'.padEnd(30)} ${snapshots.map((s) => column(`${s.latency.p50 ?? '–'} / ${s.latency.p99 ?? '–'} ms`)).join('')}`,
  );
  console.log(`${'server RSS'.padEnd(30)} ${snapshots.map((s) => column(`${s.rss.toFixed(0)} MB`)).join('')}`);
  console.log(
    `after the workload: ${pendingAfter} pending after ${drainSeconds.toFixed(1)} s (last window p50 ${final.p50 ?? '–'} ms, p99 ${final.p99 ?? '–'} ms)`,
  );
  const loadAverage = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `CPU share of one core: server ${(cpuShare.server * 100).toFixed(0)} % (PostgreSQL included); load generator: ` +
      `bench ${(cpuShare.bench * 100).toFixed(0)} %, receiver ${(cpuShare.receiver * 100).toFixed(0)} %, ` +
      `readers ${(cpuShare.readers * 100).toFixed(0)} %; load average ${loadAverage} (${os.cpus().length} cores)`,
  );
  for (const [name, share] of Object.entries(cpuShare))
    if (name !== 'server' && share > LOAD_CPU_WARN)
      console.log(
        `WARNING: the ${name} process used ${(share * 100).toFixed(0)} % of a core: the load generator may be the bottleneck, not the server`,
      );

  // Flat: what retention governs, and the process, grow by at most 10 % from the middle to the end.
  const [, middle, end] = snapshots;
  const growth = (a, b) => (b - a) / Math.max(a, 1);
  const governed = [
    'events',
    'webhook_deliveries',
    'webhook_attempts',
    'voucher_jobs',
    'graphile_worker._private_jobs',
  ];
  const misses = [];
  for (const table of governed) {
    const g = growth(middle.rows[table].mb, end.rows[table].mb);
    console.log(`${table}: size end/middle ${(1 + g).toFixed(2)}`);
    if (g > TOLERANCE && end.rows[table].mb > 1) misses.push(`${table} grew ${(g * 100).toFixed(0)} %`);
  }
  const rssGrowth = growth(middle.rss, end.rss);
  console.log(`server RSS: end/middle ${(1 + rssGrowth).toFixed(2)}`);
  if (rssGrowth > TOLERANCE) misses.push(`server RSS grew ${(rssGrowth * 100).toFixed(0)} %`);
  if (pendingAfter > 0) misses.push(`${pendingAfter} deliveries still pending ${DRAIN_SECONDS} s after the workload`);
  if (readErrors > 0) misses.push(`${readErrors} reads answered 5xx`);

  await sql.end({ timeout: 1 });
  await server.stop();
  const purged = await server.countLines(/retention: purged/);
  console.log(
    `retention runs that purged something: ${purged}; events of the subscribed types kept: ${eventsSubscribed}`,
  );
  if (!purged) misses.push('retention never purged');
  receiver.child.kill();
  await rm(dir, { recursive: true, force: true });
  if (misses.length) {
    console.log(`MISSED: ${misses.join('; ')}`);
    process.exitCode = 1;
  } else console.log('flat within 10 % from the middle to the end, and every delivery arrived');
}
