// Test support: a worker process (as `npm run worker` runs it) that a test can SIGKILL.
// Run as: node --import ./ts-hooks.mjs worker-process.mjs, with DATABASE_URL and ROUND_SIZE set.
import { loadConfig } from '../../config.js';
import { createPool } from '../../db/pool.js';
import { startWorker } from '../../worker.js';

const url = process.env.DATABASE_URL;
const sql = createPool(url, { max: 4 });
// DATABASE_URL requires a key of webhook secrets; this worker issues vouchers and opens none.
const config = loadConfig({
  LOYALTY_SECRET_KEY: 'test-only key of webhook secrets at rest',
  ...process.env,
  LOYALTY_FIXTURES: 'none',
});
await startWorker({
  connectionString: url,
  sql,
  config,
  concurrency: 2,
  pollInterval: 50,
  tasks: { roundSize: Number(process.env.ROUND_SIZE ?? 5000) },
});
process.stdout.write('ready\n');
