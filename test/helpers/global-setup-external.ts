import { randomBytes } from 'node:crypto';
import path from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { requireSupportedVersion } from '../../server/src/boot.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createPool } from '../../server/src/db/pool.js';
import { loadFixtureFile } from '../../server/src/services/platform/fixtures.js';

/**
 * The `external-pg` project: the server and end-to-end tests on a PostgreSQL the machine
 * already runs (LOYALTY_TEST_DATABASE_URL, a superuser's URL; `.ci/run` starts Debian's), as
 * DATABASE_URL users run the server. A template database of this run's own is migrated and seeded
 * there and dropped at the end, with every clone a file left behind.
 */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.LOYALTY_TEST_DATABASE_URL!;
  const template = `loyalty_template_${randomBytes(4).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const major = await requireSupportedVersion(admin, adminUrl);
  await admin.unsafe(`CREATE DATABASE ${template}`);
  const url = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${template}$1`);
  const sql = createPool(url, { max: 2 });
  try {
    await migrate(sql, url);
    await loadFixtureFile(sql, path.resolve(import.meta.dirname, '../../fixtures/demo.json'));
  } finally {
    await sql.end({ timeout: 5 });
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgMajor', major);
  console.error(`external PostgreSQL ${major}: template ${template}`);
  return async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  };
}
