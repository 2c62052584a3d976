import cluster, { type Worker } from 'node:cluster';
import { onShutdown, openDatabase } from './boot.js';
import type { Config } from './config.js';
import { freePort } from './db/embedded.js';
import { createPools } from './db/pools.js';
import { defined } from './lib/defined.js';
import { createLogger } from './lib/logger.js';
import { startReport } from './lib/start-banner.js';
import { createServer } from './server.js';
import { metricsStartWarning } from './plugins/metrics.js';
import { drainingStop } from './lib/graceful-stop.js';
import { startWorker } from './worker.js';

/**
 * LOYALTY_API_PROCESSES > 1 (`loyalty server --processes N`): every core of one machine.
 *
 * The primary opens the database once (the embedded PostgreSQL, migrations, fixtures, the sealing
 * of webhook secrets), runs the background worker when LOYALTY_WORKER is on, and forks N API
 * processes (node:cluster) that share its port: each has its own pools and hapi server and runs
 * no jobs. Rate limits, idempotency keys, jobs and events live in PostgreSQL, so the processes
 * behave as one server. The URL line is printed once, when every API process listens.
 * SIGTERM/SIGINT to the primary stops the API processes gracefully (in-flight requests finish),
 * then the worker, then the embedded PostgreSQL. An API process that dies is replaced.
 */

type Ready = { type: 'loyalty-listening'; uri: string };
const isReady = (message: unknown): message is Ready => (message as Ready | undefined)?.type === 'loyalty-listening';

export async function runClusterPrimary(config: Config): Promise<void> {
  const db = await openDatabase(config);
  config = db.config; // with the embedded database's generated key of webhook secrets
  await db.sql.end({ timeout: 5 });
  // The API processes all listen on one port: picked here, once.
  const port = config.port === 0 ? await freePort(config.host) : config.port;
  const env: Record<string, string> = {
    PORT: String(port),
    DATABASE_URL: db.url,
    // Set: required with DATABASE_URL (config.ts), generated with the embedded database (boot.ts).
    LOYALTY_SECRET_KEY: defined(config.secretKey, 'the secret key of webhook secrets'),
    LOYALTY_WORKER: 'off',
    LOYALTY_FIXTURES: 'none',
  };
  let stopping = false;
  let pools: ReturnType<typeof createPools> | undefined;
  let runner: Awaited<ReturnType<typeof startWorker>> | undefined;
  const workers = new Set<Worker>();
  const exited = (worker: Worker) =>
    new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve())));

  const fork = (): Promise<string> => {
    const worker = cluster.fork(env);
    workers.add(worker);
    return new Promise<string>((resolve, reject) => {
      let listening = false;
      worker.on('message', (message: unknown) => {
        if (!isReady(message)) return;
        listening = true;
        resolve(message.uri);
      });
      worker.once('exit', (code, signal) => {
        workers.delete(worker);
        if (!listening) reject(new Error(`an API process exited before listening (${signal ?? `code ${code}`})`));
        else if (!stopping) {
          console.error(
            `loyalty: API process ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`,
          );
          fork().catch((error: unknown) => console.error(`loyalty: ${(error as Error).message}`));
        }
      });
    });
  };

  const stopAll = async () => {
    stopping = true;
    db.embedded?.stopping(); // from here on, PostgreSQL's exit is no crash to recover from
    // SIGTERM: each API process stops its server (in-flight requests complete) and its pools.
    for (const worker of workers) worker.process.kill('SIGTERM');
    await Promise.all([...workers].map(exited));
    await runner?.stop();
    await pools?.end();
    await db.embedded?.stop();
  };

  let uri: string;
  try {
    [uri] = (await Promise.all(Array.from({ length: config.apiProcesses }, fork))) as [string];
    if (config.worker) {
      pools = createPools(db.url, config);
      runner = await startWorker({
        connectionString: db.url,
        sql: pools.worker,
        config,
        logger: createLogger({ level: config.logLevel }),
      });
    }
  } catch (error) {
    await stopAll().catch(() => {});
    throw error;
  }
  onShutdown(stopAll);
  const report = startReport({ uri, config, database: db.about }, process.stdout.isTTY === true);
  for (const line of report.err) console.error(line);
  const metricsWarning = metricsStartWarning(config); // once for all API processes
  if (metricsWarning) console.error(metricsWarning);
  for (const line of report.out) console.log(line);
}

/** An API process of the cluster: its pools and hapi server on the primary's port; no jobs, no migrations. */
export async function runClusterApiProcess(config: Config): Promise<void> {
  // The primary passes its database's URL to every API process.
  const pools = createPools(defined(config.databaseUrl, 'DATABASE_URL of an API process'), config);
  const server = await createServer({
    sql: pools.api,
    streamSql: pools.streams,
    config,
    logger: createLogger({ level: config.logLevel }),
  });
  try {
    await server.start();
  } catch (error) {
    await pools.end().catch(() => {});
    throw error;
  }
  const stop = drainingStop(server);
  onShutdown(async () => {
    await stop({ graceMs: config.shutdownGraceMs, timeoutMs: 10_000 });
    await pools.end();
  });
  // The primary going away without stopping us (kill -9): stop too, rather than serve alone.
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // A cluster worker always has the IPC channel to its primary.
  if (!process.send) throw new Error('Internal error: the IPC channel of an API process is missing');
  process.send({ type: 'loyalty-listening', uri: server.info.uri } satisfies Ready);
}

export const isClusterApiProcess = (): boolean => cluster.isWorker;
