// A benchmark's own database: an embedded PostgreSQL (durable settings) in a temporary directory,
// migrated, with the demo fixtures; `stop` removes it all. And the load-average line every
// benchmark prints, since other processes on a shared machine move its figures.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createPool, loadFixtureCatalogue, migrate, root, startEmbeddedPostgres } from './server-dist.mjs';

/** @param {{ max?: number }} [options] pool size of `sql` (default 20); `dir` of the answer is the temporary directory */
export async function startBenchDatabase({ max = 20 } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data') });
  const sql = createPool(pg.url, { max });
  const stop = async () => {
    await sql.end({ timeout: 5 });
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await migrate(sql, pg.url);
    await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: pg.url, sql, stop, dir };
}

/** `load average during the run: 1.2 0.9 0.5 (2 CPUs)` */
export const loadLine = () =>
  `load average during the run: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (${os.cpus().length} CPUs)`;
