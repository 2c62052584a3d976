import { loadConfig } from './config.js';
import { onShutdown, openDatabase } from './boot.js';
import { createPools } from './db/pools.js';
import { createServer } from './server.js';
import { metricsStartWarning } from './plugins/metrics.js';
import { drainingStop } from './lib/graceful-stop.js';
import { exitOnStartupFailure, StartupError } from './lib/startup-errors.js';
import { requirePortFree } from './lib/port-probe.js';
import { checkWalletCredentials } from './services/wallet/wallet-credentials.js';
import { startWorker } from './worker.js';
import { createLogger } from './lib/logger.js';
import { startReport } from './lib/start-banner.js';
import { surviveLostDatabaseRejections } from './db/lost-database-rejections.js';
import { isClusterApiProcess, runClusterApiProcess, runClusterPrimary } from './cluster.js';

async function main() {
  // Before the database starts: credentials that cannot sign name their variable in one line.
  await checkWalletCredentials(loadConfig()).catch((error: unknown) => {
    throw new StartupError(error instanceof Error ? error.message : String(error));
  });
  if (isClusterApiProcess()) return runClusterApiProcess(loadConfig());
  await requirePortFree(loadConfig().host, loadConfig().port);
  if (loadConfig().apiProcesses > 1) return runClusterPrimary(loadConfig()); // LOYALTY_API_PROCESSES: see cluster.ts
  const db = await openDatabase(loadConfig());
  const { config } = db; // with the embedded database's generated key of webhook secrets when LOYALTY_SECRET_KEY is unset
  await db.sql.end({ timeout: 5 }); // migrations and fixtures are done; requests and jobs get pools of their own
  const pools = createPools(db.url, config);
  const logger = createLogger({ level: config.logLevel }); // JSON lines on stdout (calm in a terminal: lib/logger.ts)
  let runner: Awaited<ReturnType<typeof startWorker>> | undefined;
  const workerHealth = config.worker ? () => runner?.health() ?? { ok: false, lastBeatAt: null } : undefined;
  const server = await createServer({ sql: pools.api, streamSql: pools.streams, config, workerHealth, logger });
  try {
    await server.start();
    runner = config.worker
      ? await startWorker({ connectionString: db.url, sql: pools.worker, config, logger })
      : undefined;
  } catch (error) {
    // e.g. the port is in use: stop the embedded PostgreSQL too, or it outlives this process.
    await server.stop({ timeout: 1_000 }).catch(() => {});
    await pools.end().catch(() => {});
    await db.embedded?.stop().catch(() => {});
    throw error;
  }
  const stop = drainingStop(server);
  onShutdown(async () => {
    db.embedded?.stopping(); // from here on, PostgreSQL's exit is no crash to recover from
    await stop({ graceMs: config.shutdownGraceMs, timeoutMs: 10_000 });
    await runner?.stop();
    await pools.end();
    await db.embedded?.stop();
  });
  const report = startReport({ uri: server.info.uri, config, database: db.about }, process.stdout.isTTY === true);
  for (const line of report.err) console.error(line);
  const metricsWarning = metricsStartWarning(config); // HOST beyond loopback, no LOYALTY_METRICS_TOKEN
  if (metricsWarning) console.error(metricsWarning);
  for (const line of report.out) console.log(line);
}

surviveLostDatabaseRejections();
main().catch((error: unknown) => exitOnStartupFailure(error));
