// Where the time of a sign-up import goes (issue 17), not a benchmark run by `npm run bench`:
// `node --cpu-prof --cpu-prof-dir=DIR test/bench/lib/profile-signups.mjs` profiles the server's
// process (the client's fetch runs in it too, a few ms an import) while it takes IMPORTS imports of
// 2000 new members, with pg_stat_statements (nested statements too) loaded in the embedded
// PostgreSQL. Prints the statements by time per import, then the plans (EXPLAIN ANALYZE, BUFFERS,
// triggers and nested statements, by auto_explain at NOTICE level) of one more import run by the
// server's own importSignups on a connection of its own.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import postgres from 'postgres';
import { signupBodies } from './signup-bodies.mjs';
import path from 'node:path';
import {
  adminToken,
  createPool,
  createServer,
  loadConfig,
  loadFixtureCatalogue,
  migrate,
  root,
  serverModule,
  startEmbeddedPostgres,
} from './server-dist.mjs';

const IMPORTS = Number(process.env.IMPORTS ?? 30);
const PER_IMPORT = 2000;

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-profile-'));
await chmod(dir, 0o755);
const dataDir = path.join(dir, 'data');
let pg = await startEmbeddedPostgres({ dataDir });
let sql = createPool(pg.url, { max: 4 });
console.error('started');
for (const setting of [`shared_preload_libraries = pg_stat_statements`, `pg_stat_statements.track = 'all'`])
  await sql.unsafe(`ALTER SYSTEM SET ${setting}`);
console.error('altered');
await sql.end();
await pg.stop();
console.error('stopped');
pg = await startEmbeddedPostgres({ dataDir });
sql = createPool(pg.url, { max: 20 });
try {
  console.error('restarted with the extensions');
  await migrate(sql, pg.url);
  console.error('migrated');
  await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  const config = { ...loadConfig({}), port: 0, host: '127.0.0.1', rateLimitToken: 1e9, rateLimitIp: 1e9 };
  const api = await createServer({ sql, config, log: () => {} });
  await api.start();
  const token = await adminToken(api.info.uri);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const bodies = signupBodies(IMPORTS, PER_IMPORT);
  const times = [];
  for (const [r, body] of bodies.entries()) {
    if (r === 3) await sql`SELECT pg_stat_statements_reset()`;
    const started = performance.now();
    const res = await fetch(`${api.info.uri}/members/signups`, { method: 'POST', headers: auth, body });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`import ${r}: ${res.status}`);
    times.push(performance.now() - started);
  }
  const sorted = times.slice(3).sort((a, b) => a - b);
  console.log(
    `${IMPORTS} imports of ${PER_IMPORT}: p50 ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms (load ${os.loadavg()[0].toFixed(1)})`,
  );
  const stats = await sql`
    SELECT calls, round(total_exec_time::numeric / ${IMPORTS - 3}, 2) AS ms_per_import, rows,
           shared_blks_hit + shared_blks_read AS blocks, wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
    FROM pg_stat_statements WHERE toplevel OR NOT toplevel ORDER BY total_exec_time DESC LIMIT 15`;
  for (const s of stats)
    console.log(
      `${String(s.ms_per_import).padStart(8)} ms/import ${String(s.calls).padStart(5)} calls  ${String(s.wal_bytes).padStart(10)} WAL B  ${s.query}`,
    );
  await api.stop();
  const { importSignups } = await serverModule('services/members/members-signups.js');
  const { unixSocketOf } = await serverModule('db/pool.js');
  const plans = [];
  const conn = postgres(pg.url, { ...unixSocketOf(pg.url), max: 1, onnotice: (n) => plans.push(n.message) });
  await conn`LOAD 'auto_explain'`;
  for (const setting of [
    'log_level = notice',
    'log_min_duration = 0',
    'log_analyze = on',
    'log_buffers = on',
    'log_triggers = on',
    'log_nested_statements = on',
    'log_wal = on',
    'log_parameter_max_length = 0',
  ])
    await conn.unsafe(`SET auto_explain.${setting}`);
  const users = Array.from({ length: PER_IMPORT }, (_, i) => ({
    email: `explain-${i}@example.org`,
    first_name: `First${i}`,
    last_name: 'Explain',
    subscribed_at: '2026-01-02 03:04:05',
  }));
  const started = performance.now();
  await conn.begin((tx) => importSignups(tx, { organizationIds: ['org-acme'] }, { brand_id: 'brand-acme', users }));
  console.log(`one more import under EXPLAIN ANALYZE: ${(performance.now() - started).toFixed(0)} ms`);
  console.log(plans.join('\n'));
  await conn.end();
} finally {
  await sql.end({ timeout: 5 });
  await pg.stop();
  if (process.env.PROFILE_KEEP) console.log(`kept ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
process.exit(0);
