// Soak (issue 14 item 7): the real server process (`node server/dist/start.js`, embedded
// PostgreSQL in a temp directory, worker in the process) under a mixed workload for SOAK_SECONDS
// (default 300), with a fast retention period (LOYALTY_RETENTION_DAYS = 60 s), a cycle every 3 s
// at most (SOAK_CYCLE_MS):
//   - every cycle: 200 sign-ups (member.created), a tag of those members, a voucher job on it
//     (coupon.issued), then the members and the tag deleted again;
//   - one subscription to both events, answered by a local receiver (deliveries, attempts);
//   - 4 readers looping over GET /tags, GET /health/ready and a member's GET;
//   - a new access token and an idempotent POST every cycle.
// It prints the rows and on-disk size of the tables retention governs, and the server's RSS,
// after the warm-up (90 s), in the middle and at the end; the end must stay within 10 % of the
// middle (the warm-up fills the retention window first). Exit 1 when it does not.
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { adminToken, createPool, root } from './lib/server-dist.mjs';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const RETENTION_SECONDS = 60;
// The retention window fills, and the first purges (every quarter of it) run, before sizes are compared.
const WARMUP = Math.min(RETENTION_SECONDS * 1.5, SECONDS / 3);
const TOLERANCE = 0.1;
/** A cycle starts at most this often: a workload the machine sustains (a growing delivery backlog is not retention's to purge). */
const CYCLE_MS = Number(process.env.SOAK_CYCLE_MS ?? 3000);
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

let received = 0;
const receiver = createHttpServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.end('ok');
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', () => resolve(undefined)));

const server = spawn(process.execPath, ['server/dist/start.js'], {
  cwd: root,
  env: {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    LOYALTY_DATA_DIR: dataDir,
    LOYALTY_RETENTION_DAYS: String(RETENTION_SECONDS / 86_400),
    LOYALTY_WEBHOOK_ALLOW_INSECURE: '1',
    LOYALTY_RATE_LIMIT_TOKEN: '1000000',
    LOYALTY_RATE_LIMIT_IP: '1000000',
    LOYALTY_WEBHOOK_RETRY_DELAYS: '1,1,1,1,1,1,1',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let serverLog = '';
server.stderr.on('data', (d) => (serverLog += d));
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match) resolve(match[1]);
  });
  server.on('exit', (code) => reject(new Error(`server exited ${code}:\n${serverLog}`)));
});
const password = (await readFile(path.join(dataDir, 'loyalty-db-password'), 'utf8')).trim();
const sql = createPool(
  `postgres://postgres:${encodeURIComponent(password)}@${encodeURIComponent(dataDir)}:5432/loyalty`,
  { max: 2 },
);

let bearer = await adminToken(url);
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
  url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (receiver.address()).port}/hook`,
  events: ['member.created', 'coupon.issued'],
});
if (subscription.status !== 201) throw new Error(`subscription: ${JSON.stringify(subscription.json)}`);

const started = Date.now();
const elapsed = () => (Date.now() - started) / 1000;
let cycles = 0;
let reads = 0;
let lastMember;

async function cycle(n) {
  bearer = await adminToken(url);
  const emails = Array.from({ length: 200 }, (_, i) => `soak-${n}-${i}@example.org`);
  await api(
    'POST',
    '/members/signups',
    { brand_id: 'brand-acme', users: emails.map((email) => ({ email })) },
    { 'idempotency-key': `soak-signups-${n}` },
  );
  const ids = (await sql`SELECT id FROM members WHERE email LIKE ${`soak-${n}-%`}`).map((r) => r.id);
  lastMember = ids[0];
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

async function reader() {
  while (elapsed() < SECONDS) {
    await api('GET', '/tags?brand_id=brand-acme');
    await fetch(`${url}/health/ready`).then((r) => r.text());
    if (lastMember) await api('GET', `/members/${lastMember}?brand_id=brand-acme`);
    reads += 3;
  }
}

const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
async function snapshot(label) {
  const rows = {};
  for (const table of TABLES) {
    const [r] = await sql.unsafe(
      `SELECT count(*)::int AS n, pg_total_relation_size('${table}')::bigint AS bytes FROM ${table}`,
    );
    rows[table] = { n: r.n, mb: Number(r.bytes) / 2 ** 20 };
  }
  const [{ pending }] = await sql`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`;
  return { label, at: elapsed(), rss: rssOf(server.pid), rows, pending };
}

const snapshots = [];
const readers = Array.from({ length: 4 }, reader);
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
await Promise.all([cycles$, ...readers]);

console.log(
  `soak: ${SECONDS} s, retention ${RETENTION_SECONDS} s, ${cycles} cycles of 200 sign-ups + voucher job + deletes, ${reads} reads, ${received} webhook requests received`,
);
console.log(`${'table'.padEnd(30)} ${snapshots.map((s) => `${s.label} (${s.at.toFixed(0)} s)`.padStart(26)).join('')}`);
for (const table of TABLES) {
  console.log(
    `${table.padEnd(30)} ${snapshots.map((s) => `${s.rows[table].n} rows ${s.rows[table].mb.toFixed(1)} MB`.padStart(26)).join('')}`,
  );
}
console.log(
  `${'  of which pending deliveries'.padEnd(30)} ${snapshots.map((s) => `${s.pending}`.padStart(26)).join('')}`,
);
console.log(`${'server RSS'.padEnd(30)} ${snapshots.map((s) => `${s.rss.toFixed(0)} MB`.padStart(26)).join('')}`);

// Flat: what retention governs, and the process, grow by at most 10 % from the middle to the end.
const [, middle, end] = snapshots;
const growth = (a, b) => (b - a) / Math.max(a, 1);
const governed = ['events', 'webhook_deliveries', 'webhook_attempts', 'voucher_jobs', 'graphile_worker._private_jobs'];
const misses = [];
for (const table of governed) {
  const g = growth(middle.rows[table].mb, end.rows[table].mb);
  console.log(`${table}: size end/middle ${(1 + g).toFixed(2)}`);
  if (g > TOLERANCE && end.rows[table].mb > 1) misses.push(`${table} grew ${(g * 100).toFixed(0)} %`);
}
const rssGrowth = growth(middle.rss, end.rss);
console.log(`server RSS: end/middle ${(1 + rssGrowth).toFixed(2)}`);
if (rssGrowth > TOLERANCE) misses.push(`server RSS grew ${(rssGrowth * 100).toFixed(0)} %`);
const purged = serverLog.split('\n').filter((l) => /retention: purged/.test(l)).length;
console.log(`retention runs that purged something: ${purged}`);
if (!purged) misses.push('retention never purged');

await sql.end({ timeout: 1 });
server.kill('SIGTERM');
await new Promise((r) => server.on('exit', r));
receiver.close();
await rm(dir, { recursive: true, force: true });
if (misses.length) {
  console.log(`MISSED: ${misses.join('; ')}`);
  process.exitCode = 1;
} else console.log('flat within 10 % from the middle to the end');
