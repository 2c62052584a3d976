// `npm test`'s runner: one PostgreSQL for the whole run and two lanes of vitest beside each other.
//   parallel lane: every project but `serial`, several files at a time (they wait on PostgreSQL,
//                  sockets and child processes far more than they compute);
//   serial lane:   the `serial` project (vitest.config.ts), one file at a time: the tests that
//                  start PostgreSQL or server processes of their own and the timing-sensitive ones.
// The lanes' per-file durations are merged into test-artifacts/test-durations.json, and the run's
// time is printed against its budget (LOYALTY_TEST_BUDGET_SECONDS, default 240).
// Arguments go to both vitest runs (e.g. `npm test -- server/src/routes`); `--lane parallel|serial`
// runs one lane only.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const artifacts = path.join(root, 'test-artifacts');
const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');
const budget = Number(process.env.LOYALTY_TEST_BUDGET_SECONDS ?? 240);
const started = performance.now();

const args = process.argv.slice(2);
const laneAt = args.indexOf('--lane');
const only = laneAt === -1 ? undefined : args.splice(laneAt, 2)[1];

const { startEmbeddedPostgres } = await import(path.join(root, 'server/dist/db/embedded.js'));
const { migrate } = await import(path.join(root, 'server/dist/db/migrate.js'));
const { createPool } = await import(path.join(root, 'server/dist/db/pool.js'));
const { loadFixture, withoutRecords } = await import(path.join(root, 'server/dist/services/platform/fixtures.js'));

// The run's PostgreSQL: a template database migrated and seeded once, cloned by every file.
const TEMPLATE = 'loyalty_template';
const tmp = await mkdtemp(path.join(os.tmpdir(), 'loyalty-test-pg-'));
await chmod(tmp, 0o755); // as root, PostgreSQL runs as its own user, which must enter it
const pg = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'data'), database: TEMPLATE, durable: false });
const stopPg = async () => {
  await pg.stop().catch(() => {});
  await rm(tmp, { recursive: true, force: true });
};
let exitCode = 1;
try {
  const sql = createPool(pg.url, { max: 2 });
  try {
    await migrate(sql, pg.url);
    // The demo fixtures without their records (tags, members, passes, a voucher job), as
    // test/helpers/test-fixtures.ts: a test counts only what it made.
    const demo = JSON.parse(await readFile(path.join(root, 'fixtures/demo.json'), 'utf8'));
    await loadFixture(sql, withoutRecords(demo));
  } finally {
    await sql.end({ timeout: 5 });
  }
  await mkdir(artifacts, { recursive: true });
  const env = {
    ...process.env,
    LOYALTY_TEST_PG_ADMIN_URL: pg.url.replace(/\/[^/]+$/, '/postgres'),
    LOYALTY_TEST_PG_TEMPLATE: TEMPLATE,
    LOYALTY_TEST_PG_MAJOR: '18',
    LOYALTY_TEST_UNDER_RUNNER: '1',
  };
  const lanes = [
    { name: 'parallel', projects: ['--project', '!serial'] },
    { name: 'serial', projects: ['--project', 'serial'] },
  ].filter((l) => !only || l.name === only);
  const codes = await Promise.all(lanes.map((lane) => runLane(lane, env)));
  exitCode = codes.every((c) => c === 0) ? 0 : 1;
  await summarize(
    lanes.map((l) => l.name),
    codes,
  );
} finally {
  await stopPg();
}
process.exit(exitCode);

function runLane(lane, env) {
  const out = path.join(artifacts, `test-durations-${lane.name}.json`);
  // Narrowed to some files, a lane may have none of them: that is no failure.
  const narrowed = args.some((a) => !a.startsWith('-')) ? ['--passWithNoTests'] : [];
  const child = spawn(process.execPath, [vitest, 'run', ...lane.projects, ...narrowed, ...args], {
    cwd: root,
    env: { ...env, LOYALTY_TEST_DURATIONS: out },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The serial lane's lines carry its name; the parallel lane's go through as they are.
  const prefix = lane.name === 'serial' ? 'serial │ ' : '';
  /** @param {import('node:stream').Readable} from @param {NodeJS.WriteStream} to */
  const relay = (from, to) => {
    let rest = '';
    from.setEncoding('utf8');
    from.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      if (lines.length) to.write(`${lines.map((l) => prefix + l).join('\n')}\n`);
    });
    from.on('end', () => rest && to.write(`${prefix + rest}\n`));
  };
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  const stop = (signal) => child.kill(signal);
  process.once('SIGINT', stop).once('SIGTERM', stop);
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

async function summarize(names, codes) {
  const wallSeconds = Math.round((performance.now() - started) / 100) / 10;
  const files = [];
  for (const name of names) {
    const file = path.join(artifacts, `test-durations-${name}.json`);
    const report = JSON.parse(await readFile(file, 'utf8').catch(() => '{"files":[]}'));
    for (const f of report.files) files.push({ lane: name, ...f });
  }
  files.sort((a, b) => b.seconds - a.seconds);
  const sum = Math.round(files.reduce((s, f) => s + f.seconds, 0));
  await writeFile(
    path.join(artifacts, 'test-durations.json'),
    `${JSON.stringify({ finishedAt: new Date().toISOString(), wallSeconds, budgetSeconds: budget, fileSecondsSum: sum, files }, null, 2)}\n`,
  );
  const verdict =
    wallSeconds <= budget
      ? `within the ${budget} s budget`
      : `OVER the ${budget} s budget by ${Math.round(wallSeconds - budget)} s: a slower suite is a regression`;
  console.log(
    [
      '',
      'Slowest test files (seconds, import and hooks included):',
      ...files
        .slice(0, 20)
        .map((f) => `  ${f.seconds.toFixed(1).padStart(6)} s  ${f.lane.padEnd(8)} ${f.project.padEnd(12)} ${f.file}`),
      `Suite: ${files.length} files, ${wallSeconds} s wall (${sum} s of file time in both lanes), ${verdict}.`,
      'Per-file durations: test-artifacts/test-durations.json',
      ...failureLines(files, names, codes),
      '',
    ].join('\n'),
  );
}

/**
 * What failed, last of all: a CI log is often read from its tail, and the lanes' own reports of a
 * failure scroll away above the other lane's output. A lane that failed with no failed test (an
 * error outside the tests, a crash) is named too.
 */
function failureLines(files, names, codes) {
  const failed = files.filter((f) => f.failures?.length || (f.state && f.state !== 'passed' && f.state !== 'skipped'));
  const lines = failed.flatMap((f) =>
    (f.failures?.length ? f.failures : [{ test: '(file)', message: f.state }]).map(
      (x) => `  ${f.lane.padEnd(8)} ${f.file} > ${x.test}: ${x.message}`,
    ),
  );
  names.forEach((name, i) => {
    if (codes[i] !== 0 && !failed.some((f) => f.lane === name))
      lines.push(`  ${name.padEnd(8)} exited ${codes[i]} with no failed test recorded: see its output above`);
  });
  const flaky = files.flatMap((f) =>
    (f.flaky ?? []).map((x) => `  ${f.lane.padEnd(8)} ${f.file} > ${x.test}: first try: ${x.message}`),
  );
  return [
    ...(flaky.length ? ['', `Passed only on a retry (${flaky.length}): a bound missed under load once`, ...flaky] : []),
    ...(lines.length ? ['', `FAILED (${lines.length}):`, ...lines] : []),
  ];
}
