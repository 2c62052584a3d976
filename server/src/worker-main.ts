import { loadConfig } from './config.js';
import { onShutdown, openDatabase } from './boot.js';
import { createPools } from './db/pools.js';
import { exitOnStartupFailure } from './lib/startup-errors.js';
import { startWorker } from './worker.js';
import { createLogger } from './lib/logger.js';
import { surviveLostDatabaseRejections } from './db/lost-database-rejections.js';

/** `npm run worker`: background jobs only, for deployments that split API and workers. */
async function main() {
  const db = await openDatabase(loadConfig(), { seed: false });
  const { config } = db; // with the embedded database's generated key of webhook secrets when LOYALTY_SECRET_KEY is unset
  await db.sql.end({ timeout: 5 });
  const pools = createPools(db.url, config);
  const runner = await startWorker({
    connectionString: db.url,
    sql: pools.worker,
    config,
    logger: createLogger({ level: config.logLevel }),
  });
  onShutdown(async () => {
    db.embedded?.stopping(); // from here on, PostgreSQL's exit is no crash to recover from
    await runner.stop();
    await pools.end();
    await db.embedded?.stop();
  });
  console.log('Loyalty worker running');
}

surviveLostDatabaseRejections();
main().catch((error: unknown) => exitOnStartupFailure(error));
