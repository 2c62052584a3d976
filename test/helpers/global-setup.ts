import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createPool } from '../../server/src/db/pool.js';
import { loadFixtureFile } from '../../server/src/services/platform/fixtures.js';

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

/**
 * One real PostgreSQL for the whole run: a template database migrated and seeded once; each
 * test file clones it (CREATE DATABASE … TEMPLATE), so files are isolated and start fast.
 */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-test-pg-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter this directory.
  await chmod(dataDir, 0o755);
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'data'),
    database: TEMPLATE_DB,
    durable: false,
  });
  const sql = createPool(pg.url, { max: 2 });
  try {
    await migrate(sql, pg.url);
    await loadFixtureFile(sql, path.resolve(import.meta.dirname, '../../fixtures/demo.json'));
  } finally {
    await sql.end({ timeout: 5 });
  }
  project.provide('pgAdminUrl', pg.url.replace(/\/[^/]+$/, '/postgres'));
  project.provide('pgTemplate', TEMPLATE_DB);
  project.provide('pgMajor', 18);
  return async () => {
    await pg.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
