import { fileURLToPath } from 'node:url';
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
      { resolve: testHelpers, test: { name: 'cli', include: ['cli/src/**/*.test.{ts,tsx}'] } },
      { resolve: testHelpers, test: { name: 'server', ...server, globalSetup: ['test/helpers/global-setup.ts'] } },
      { resolve: testHelpers, test: { name: 'e2e', ...e2e, globalSetup: ['test/helpers/global-setup.ts'] } },
      ...(process.env.LOYALTY_TEST_DATABASE_URL
        ? [
            {
              resolve: testHelpers,
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
