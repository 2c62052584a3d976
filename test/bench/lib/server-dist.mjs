// The built server's modules, for benchmarks that compose their own server and database.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../../', import.meta.url));
const dist = (file) => path.join(root, 'server/dist', file);
if (!existsSync(dist('server.js')) || !existsSync(dist('worker.js'))) {
  console.error('server/dist is missing: run `npx tsc -b server` first.');
  process.exit(1);
}
export const { createServer } = await import(dist('server.js'));
export const { loadConfig } = await import(dist('config.js'));
export const { startEmbeddedPostgres } = await import(dist('db/embedded.js'));
export const { migrate } = await import(dist('db/migrate.js'));
export const { createPool } = await import(dist('db/pool.js'));
const { loadFixture, withoutRecords } = await import(dist('services/platform/fixtures.js'));
/**
 * A fixture file without its organizations' records (tags, members, passes, voucher jobs): the
 * demo catalogue and clients, so a benchmark counts only the rows it made.
 */
export const loadFixtureCatalogue = async (sql, file) =>
  loadFixture(sql, withoutRecords(JSON.parse(await readFile(file, 'utf8'))));
export const { startWorker, DEFAULT_CONCURRENCY } = await import(dist('worker.js'));
/** Any other module of the built server, e.g. `serverModule('services/webhooks/deliveries.js')`. */
export const serverModule = (file) => import(dist(file));

export { adminToken } from './admin-token.mjs';
