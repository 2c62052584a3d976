// `loyalty members export` (issue 18, part 3) against the built server (its own process, worker
// included) on a fresh embedded PostgreSQL: wall time and peak RSS of the CLI process for the
// streamed list (CSV and JSON Lines) and, at 100k and below, the paged path, each against the
// baseline of the same run: a bare `fetch` of the same unpaged list read to its last byte in a
// process of its own (what the server can give; the export can only add to it).
//
//   npm run build && node test/bench/members-export.mjs          100k members (what `npm run bench` runs)
//   BENCH_EXPORT_SIZES=100k,1m node test/bench/members-export.mjs
//
// Verdict (exit 1 on any ✗): an export that fails or writes another number of rows, a CLI peak RSS
// of 150 MB or more, or a streamed export taking more than 2.5× the bare fetch (CLI start-up included).
// Members are inserted with SQL (an import of a million would take minutes): e-mails, names with
// quotes and backslashes, a street and a city, all on brand-acme.
import { spawn } from 'node:child_process';
import { createReadStream, rmSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadLine, startBenchDatabase } from './lib/bench-database.mjs';
import { cliEnv, runCli } from './lib/cli-process.mjs';
import { followPeak } from './lib/proc-memory.mjs';
import { adminToken } from './lib/server-dist.mjs';
import { startServerProcess } from './lib/server-process.mjs';

const parseSize = (text) => Math.round(Number.parseFloat(text) * ({ k: 1e3, m: 1e6 }[text.at(-1)?.toLowerCase()] ?? 1));
const sizes = (process.env.BENCH_EXPORT_SIZES ?? '100k').split(',').map(parseSize);
const targets = { rssMb: 150, ratio: 2.5 };
const PAGED_UP_TO = 100_000;

const mb = (bytes) => `${(bytes / 1048576).toFixed(0)} MB`;
const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** Lines (\n) in a file, read in pieces. */
const countLines = (file) =>
  new Promise((resolve, reject) => {
    let lines = 0;
    createReadStream(file)
      .on('data', (/** @type {Buffer} */ b) => {
        for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) lines++;
      })
      .on('end', () => resolve(lines))
      .on('error', reject);
  });

/** The baseline: the unpaged list read to its last byte by a bare fetch, in a process of its own. */
const BARE_FETCH = `
  const [url, token] = process.argv.slice(1);
  const started = performance.now();
  const res = await fetch(url + '/members/list', { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify({ brand_id: 'brand-acme' }) });
  let bytes = 0;
  for await (const chunk of res.body) bytes += chunk.length;
  console.log(JSON.stringify({ status: res.status, ms: performance.now() - started, bytes }));`;
function bareFetch(url, token) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', BARE_FETCH, url, token], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const peak = followPeak(/** @type {number} */ (child.pid));
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const peakRss = peak.stop();
      if (code === 0) resolve({ ...JSON.parse(out), peakRss });
      else reject(new Error(`the bare fetch exited ${code}`));
    });
  });
}

const work = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-export-'));
const db = await startBenchDatabase({ max: 4 });
let server;
let failed = false;
try {
  server = await startServerProcess({
    databaseUrl: db.url,
    env: { LOYALTY_RATE_LIMIT_TOKEN: '1000000', LOYALTY_RATE_LIMIT_IP: '1000000' },
  });
  const env = cliEnv(path.join(work, 'config'));
  const login = await runCli(
    ['login', '--api-url', server.url, '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
    { env, input: 'acme-admin-secret' },
  );
  if (login.code !== 0) throw new Error(`loyalty login exited ${login.code}: ${login.stderr}`);
  const [{ before }] = await db.sql`SELECT count(*)::int AS before FROM brand_members WHERE brand_id = 'brand-acme'`;
  let seeded = 0;
  for (const n of sizes) {
    const started = performance.now();
    for (let from = seeded; from < n; from += 100_000) {
      const upto = Math.min(n, from + 100_000);
      await db.sql`
        WITH m AS (
          INSERT INTO members (organization_id, email, first_name, last_name, street, city, country)
          SELECT 'org-acme', 'export-' || i || '@example.org', 'First "' || i || '"', 'Last\\' || i,
                 'Long Street Name ' || i, 'Amsterdam', 'NL'
          FROM generate_series(${from + 1}::int, ${upto}::int) i
          RETURNING id
        )
        INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-acme', id FROM m`;
    }
    seeded = n;
    await db.sql`VACUUM ANALYZE`;
    const rows = before + n;
    console.log(
      `\n${n.toLocaleString('en-US')} members (${rows.toLocaleString('en-US')} on brand-acme), inserted in ${secs(performance.now() - started)}`,
    );
    const bare = await bareFetch(server.url, await adminToken(server.url));
    if (bare.status !== 200) throw new Error(`the bare fetch got ${bare.status}`);
    console.log(
      `  ${'bare fetch of the unpaged list (baseline)'.padEnd(46)} ${secs(bare.ms).padStart(9)}   RSS ${mb(bare.peakRss).padStart(6)}   ${mb(bare.bytes)} of JSON`,
    );

    const runs = [
      { label: 'members export (streamed, CSV)', args: [], lines: rows + 1, judged: true },
      { label: 'members export (streamed, JSON Lines)', args: ['--format', 'jsonl'], lines: rows, judged: true },
    ];
    if (n <= PAGED_UP_TO)
      runs.push({
        label: 'members export --per-page 1000 (CSV)',
        args: ['--per-page', '1000'],
        lines: rows + 1,
        judged: false,
      });
    for (const run of runs) {
      const file = path.join(work, 'export.out');
      const r = await runCli(['members', 'export', '-o', file, ...run.args], { env, timeoutMs: 600_000 });
      const lines = r.code === 0 ? await countLines(file) : 0;
      const size = r.code === 0 ? statSync(file).size : 0;
      rmSync(file, { force: true });
      const ratio = r.ms / bare.ms;
      const problems = [];
      if (r.code !== 0) problems.push(`exit ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
      else if (lines !== run.lines) problems.push(`${lines} lines, expected ${run.lines}`);
      if (r.peakRss >= targets.rssMb * 1048576) problems.push(`CLI RSS ≥ ${targets.rssMb} MB`);
      if (run.judged && ratio > targets.ratio) problems.push(`more than ${targets.ratio}× the bare fetch`);
      failed ||= problems.length > 0;
      console.log(
        `  ${run.label.padEnd(46)} ${secs(r.ms).padStart(9)}   CLI peak RSS ${mb(r.peakRss).padStart(6)}   ${ratio.toFixed(2)}× the bare fetch   ${mb(size)}  ${problems.length ? `✗ ${problems.join('; ')}` : '✓'}`,
      );
    }
  }
  console.log(`\n${loadLine()}`);
  console.log(`targets: CLI peak RSS < ${targets.rssMb} MB, streamed export ≤ ${targets.ratio}× the bare fetch`);
} finally {
  await server?.stop();
  await db.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
