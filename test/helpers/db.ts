import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { createPool, unixSocketOf, type Sql } from '../../server/src/db/pool.js';

export type TestDatabase = { url: string; sql: Sql; drop: () => Promise<void> };

/** A fresh database cloned from the migrated, seeded template of this run. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { ...unixSocketOf(adminUrl), max: 1, onnotice: () => {} });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        // FILE_COPY (PostgreSQL 15+): a copy of the files, faster than WAL_LOG for a small database.
        await admin.unsafe(
          `CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}${inject('pgMajor') >= 15 ? ' STRATEGY FILE_COPY' : ''}`,
        );
        break;
      } catch (error) {
        // Two files cloning the template at the same instant: PostgreSQL refuses the second; retry.
        if (attempt > 50 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/[^/]+$/, `/${name}`);
  const sql = createPool(url, { max: 10 });
  return {
    url,
    sql,
    drop: async () => {
      await sql.end({ timeout: 5 });
      const a = postgres(adminUrl, { ...unixSocketOf(adminUrl), max: 1, onnotice: () => {} });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => a.end());
    },
  };
}
