import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createPool } from '../../server/src/db/pool.js';
import { loadFixtureFile } from '../../server/src/services/platform/fixtures.js';
import { TEST_FIXTURES } from './test-fixtures.js';

export const TEMPLATE_DB = 'loyalty_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser's URL of the run's PostgreSQL (its `postgres` database). */
    pgAdminUrl: string;
    /** The migrated, seeded database that each test file clones. */
    pgTemplate: string;
    /** PostgreSQL's major version (CREATE DATABASE … STRATEGY exists from 15). */
    pgMajor: number;
  }
}

type RunDatabase = { adminUrl: string; template: string; major: number };

/**
 * One real PostgreSQL for the whole run: a template database migrated and seeded once; each test
 * file clones it (CREATE DATABASE … TEMPLATE), so files are isolated and start fast.
 *
 * `npm test` (scripts/test.mjs) starts it once for both of its lanes and hands it over in
 * LOYALTY_TEST_PG_*; a vitest run of its own starts it here, once for all of its projects (they
 * share this process: the start is kept on globalThis and stopped when the last project ends), and
 * builds the server first (tests that start `server/dist/start.js` need it current).
 */
export default async function setup(project: TestProject) {
  const given = process.env.LOYALTY_TEST_PG_ADMIN_URL;
  const run: RunDatabase = given
    ? {
        adminUrl: given,
        template: process.env.LOYALTY_TEST_PG_TEMPLATE ?? TEMPLATE_DB,
        major: Number(process.env.LOYALTY_TEST_PG_MAJOR ?? 18),
      }
    : await shared.acquire();
  project.provide('pgAdminUrl', run.adminUrl);
  project.provide('pgTemplate', run.template);
  project.provide('pgMajor', run.major);
  return given ? undefined : () => shared.release();
}

const KEY = Symbol.for('loyalty.test.runDatabase');
type Shared = { users: number; started: Promise<{ db: RunDatabase; stop: () => Promise<void> }> };
const holder = globalThis as typeof globalThis & { [KEY]?: Shared };

const shared = {
  async acquire(): Promise<RunDatabase> {
    const state = holder[KEY] ?? { users: 0, started: startRunDatabase() };
    holder[KEY] = state;
    state.users++;
    return (await state.started).db;
  },
  async release() {
    const state = holder[KEY];
    if (!state || --state.users > 0) return;
    delete holder[KEY];
    await (await state.started).stop();
  },
};

/** Builds the server (an up-to-date build costs ~2 s) and starts the embedded PostgreSQL with the template. */
export async function startRunDatabase(): Promise<{ db: RunDatabase; stop: () => Promise<void> }> {
  const root = path.resolve(import.meta.dirname, '../..');
  const build = promisify(execFile)(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b'], {
    cwd: root,
  });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-test-pg-'));
  // As root, PostgreSQL runs as its own user, which must be able to enter this directory.
  await chmod(dataDir, 0o755);
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'data'),
    database: TEMPLATE_DB,
    durable: false,
  });
  const sql = createPool(pg.url, { max: 2 });
  try {
    await migrate(sql, pg.url);
    await loadFixtureFile(sql, TEST_FIXTURES);
  } finally {
    await sql.end({ timeout: 5 });
  }
  await build;
  return {
    db: { adminUrl: pg.url.replace(/\/[^/]+$/, '/postgres'), template: TEMPLATE_DB, major: 18 },
    stop: async () => {
      await pg.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
