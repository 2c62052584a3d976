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

/**
 * Waits until the event feed's horizon (`pg_snapshot_xmin` of the cluster: the feed shows an
 * event once every transaction that began before it has ended) is held back by no transaction of
 * another database. Test files share one PostgreSQL and run side by side: a transaction another
 * file holds open would hide this file's new events for as long as it lasts. With this, a file
 * sees the feed as if it had the server to itself (its own open transactions still count).
 */
export async function untilOwnFeedHorizon(sql: Sql, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const [row] = await sql<{ own: boolean }[]>`
      WITH s AS (SELECT pg_current_snapshot() AS snap)
      SELECT pg_snapshot_xmin(snap)::text::numeric >= coalesce(
        (SELECT min(backend_xid::text::numeric) FROM pg_stat_activity
          WHERE datname = current_database() AND backend_xid IS NOT NULL),
        pg_snapshot_xmax(snap)::text::numeric) AS own
      FROM s`;
    if (row?.own) return;
    if (Date.now() > deadline) throw new Error('another database held the event feed back for 30 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}
