import { defineConfig } from 'vitest/config';

/**
 * Tests that start a PostgreSQL of their own (the embedded one: its start, its faults, its data
 * directory): they do not depend on the run's database, so the external projects leave them out.
 */
const OWN_POSTGRES = [
  'server/src/start.test.ts',
  'server/src/start-database-wait.test.ts',
  'server/src/boot.test.ts',
  'server/src/lib/startup-errors.test.ts',
  'server/src/db/embedded.test.ts',
  'test/e2e/crash-recovery.test.ts',
  'test/e2e/database-outage.test.ts',
  'test/e2e/fair-sharing-api.test.ts',
  'test/e2e/cluster.test.ts',
  'test/e2e/packed-install.test.ts',
];
const server = { include: ['server/src/**/*.test.ts'], testTimeout: 30000, hookTimeout: 60000 };
const e2e = { include: ['test/**/*.test.ts'], testTimeout: 120000, hookTimeout: 120000 };

// One runner for the whole repository. Server and cross-part tests share one embedded
// PostgreSQL started by the global setup (a template database migrated once, cloned per file).
// With LOYALTY_TEST_DATABASE_URL (a superuser's URL of a PostgreSQL 14–18 the machine runs;
// `.ci/run` sets it), they run a second time on that server (project external-pg): what DATABASE_URL users get.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'sdk',
          include: ['sdk/src/**/*.test.ts'],
          typecheck: { enabled: true, include: ['sdk/src/**/*.test-d.ts'], tsconfig: 'sdk/tsconfig.test.json' },
        },
      },
      { test: { name: 'cli', include: ['cli/src/**/*.test.{ts,tsx}'] } },
      { test: { name: 'server', ...server, globalSetup: ['test/helpers/global-setup.ts'] } },
      { test: { name: 'e2e', ...e2e, globalSetup: ['test/helpers/global-setup.ts'] } },
      ...(process.env.LOYALTY_TEST_DATABASE_URL
        ? [
            {
              test: {
                name: 'external-pg',
                ...e2e,
                include: [...server.include, ...e2e.include],
                exclude: OWN_POSTGRES,
                globalSetup: ['test/helpers/global-setup-external.ts'],
              },
            },
          ]
        : []),
    ],
  },
});
