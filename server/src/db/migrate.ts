import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations as runWorkerMigrations } from '../lib/graphile-worker.js';
import type { Sql } from './pool.js';

export const migrationsDir = fileURLToPath(new URL('../../migrations/', import.meta.url));
export const quietLogger = new Logger(() => () => {});

/** The names of this version's migration files, in the order they apply. */
export async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
}

/**
 * Applies graphile-worker's schema, then our numbered `NNNN_name.sql` files in order, each in
 * a transaction of its own (a failing file leaves the ones before it applied), under a session
 * advisory lock so several processes starting at once apply each file exactly once.
 */
export async function migrate(sql: Sql, connectionString: string): Promise<string[]> {
  await runWorkerMigrations({ connectionString, logger: quietLogger });
  const files = await migrationFiles();
  const applied: string[] = [];
  const conn = await sql.reserve();
  try {
    await conn`SELECT pg_advisory_lock(hashtext('loyalty.migrate'))`;
    await conn`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await conn<{ name: string }[]>`SELECT name FROM schema_migrations`).map((r) => r.name));
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await readFile(path.join(migrationsDir, file), 'utf8');
      try {
        await conn.unsafe(`BEGIN;\n${text}\n;INSERT INTO schema_migrations (name) VALUES ('${file}');\nCOMMIT;`);
      } catch (error) {
        await conn`ROLLBACK`.catch(() => {});
        throw new Error(`Migration ${file} failed: ${(error as Error).message}`);
      }
      applied.push(file);
    }
  } finally {
    await conn`SELECT pg_advisory_unlock(hashtext('loyalty.migrate'))`.catch(() => {});
    conn.release();
  }
  return applied;
}
