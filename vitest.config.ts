import { defineConfig } from 'vitest/config';

// One runner for the whole repository. Server and cross-part tests share one embedded
// PostgreSQL started by the global setup (a template database migrated once, cloned per file).
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'sdk', include: ['sdk/src/**/*.test.ts'], typecheck: { enabled: true, include: ['sdk/src/**/*.test-d.ts'], tsconfig: 'sdk/tsconfig.test.json' } } },
      { test: { name: 'cli', include: ['cli/src/**/*.test.{ts,tsx}'] } },
      { test: { name: 'server', include: ['server/src/**/*.test.ts'], globalSetup: ['test/helpers/global-setup.ts'], testTimeout: 30000, hookTimeout: 60000 } },
      { test: { name: 'e2e', include: ['test/**/*.test.ts'], globalSetup: ['test/helpers/global-setup.ts'], testTimeout: 120000, hookTimeout: 120000 } },
    ],
  },
});
