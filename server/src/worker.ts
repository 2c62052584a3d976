import { run } from './lib/graphile-worker.js';
import pg from 'pg';
import type { Config } from './config.js';
import type { WorkerHealth } from './context.js';
import type { Sql } from './db/pool.js';
import { quietLogger } from './db/migrate.js';
import { failFastResolver } from './lib/dns-failures.js';
import { workerLoggerOf, type Logger } from './lib/logger.js';
import { createWebhookClient } from './lib/safe-fetch.js';
import { systemResolver } from './lib/ssrf.js';
import { BACKGROUND_TASKS, createTaskList, DELIVERY_TASKS, type TaskContext } from './tasks/index.js';
import { superviseRunner, type SupervisedRunner } from './worker-supervisor.js';

/** Webhook attempts at once per process: they mostly wait on the network. */
export const DEFAULT_CONCURRENCY = 32;
/** Voucher rounds, fan-out and crons at once per process: database work, two cores. */
export const BACKGROUND_CONCURRENCY = 4;

/** The worker of one process: two graphile-worker runners, stopped and awaited together. */
export type WorkerRunner = { stop: () => Promise<void>; health: () => WorkerHealth };

/** How often the worker proves it works: a query on its own pool, from its own event loop. */
const HEARTBEAT_MS = 5000;
/** A heartbeat older than this means the worker is stuck (or its database connections are). */
const HEARTBEAT_STALE_MS = 4 * HEARTBEAT_MS;

/**
 * The graphile-worker runners: in the server process by default, or alone (`npm run worker`).
 *
 * Two runners, each with its own tasks and connections (issue 11: one dead receiver stalled
 * every tenant's background work): a background runner for voucher rounds, event fan-out and
 * crons, and a delivery runner for webhook delivery lanes. A subscription has a few lanes
 * (config.webhookConcurrencyPerSubscription), each sending its due deliveries for a short slice
 * before queueing itself behind the others (services/webhooks/deliveries.ts): subscriptions take turns,
 * and a slow or dead receiver uses its own lanes' share of the workers and no more. Jobs are
 * fetched in batches (local queue) and completions written in batches.
 */
export async function startWorker(options: {
  connectionString: string;
  sql: Sql;
  config: Config;
  /** Delivery attempts at once. */
  concurrency?: number;
  /** Tests: round size, name resolution, a task list without some tasks. */
  tasks?: Partial<Omit<TaskContext, 'sql' | 'config'>>;
  only?: string[];
  pollInterval?: number;
  /** Where a runner that stopped by itself and started again is reported (default: stderr). */
  log?: (line: string) => void;
  /** The structured log (lib/logger.ts): graphile-worker's job lines and a line per delivery attempt. None: quiet. */
  logger?: Logger;
}): Promise<WorkerRunner> {
  const { logger } = options;
  const stderr = options.log ?? ((line: string) => console.error(line));
  // A runner's stop and restart: the stderr line as before, and a structured record.
  const log = logger
    ? (line: string) => {
        stderr(line);
        logger[/running again/.test(line) ? 'info' : 'warn']({ component: 'worker' }, line.replace(/^loyalty: /, ''));
      }
    : stderr;
  const attempts = logger?.child({ component: 'worker', runner: 'deliveries' });
  const onDeliveryAttempt =
    attempts &&
    ((a: Parameters<NonNullable<TaskContext['onDeliveryAttempt']>>[0]) =>
      attempts[a.outcome === 'delivered' ? 'info' : 'warn'](
        { event: 'delivery_attempt', ...a },
        'webhook delivery attempt',
      ));
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const webhookClient = createWebhookClient({
    timeoutMs: options.config.webhookTimeoutMs,
    allowInsecure: options.config.webhookAllowInsecure,
    resolve: failFastResolver(options.tasks?.resolve ?? systemResolver),
    connections: concurrency,
  });
  const all = createTaskList({
    ...options.tasks,
    sql: options.sql,
    config: options.config,
    webhookClient,
    onDeliveryAttempt: onDeliveryAttempt ?? options.tasks?.onDeliveryAttempt,
  });
  const pick = (names: string[]) =>
    Object.fromEntries(
      Object.entries(all).filter(([name]) => names.includes(name) && (!options.only || options.only.includes(name))),
    );
  // No crontab: graphile-worker reads `<working directory>/crontab` unless its cron items are given
  // (an empty `crontab` does not count): a broken one in the folder the server was started from
  // stopped the start (issue 27). The server's periodic work is queued by queueEvery, below.
  const common = { noHandleSignals: true, pollInterval: options.pollInterval ?? 1000, parsedCronItems: [] };
  const loggerOf = (runner: string) => (logger ? workerLoggerOf(logger, runner) : quietLogger);
  // The runners' connections are ours, not graphile-worker's: it stops listening for their errors
  // before its own pool has ended, and a PostgreSQL stopping at the same moment (a harness signals
  // the whole process group) then crashed the process with an unhandled 'error' event.
  const pools: pg.Pool[] = [];
  const poolOf = (max: number, name: string) => {
    const pool = new pg.Pool({ connectionString: options.connectionString, max, application_name: name });
    // A connection closed by the server: the pool replaces an idle one; a query on a busy one fails (and its job is retried).
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    pools.push(pool);
    return pool;
  };

  const runners: SupervisedRunner[] = [];
  const background = pick(BACKGROUND_TASKS);
  let backgroundRunner: SupervisedRunner | undefined;
  if (Object.keys(background).length) {
    const backgroundPool = poolOf(BACKGROUND_CONCURRENCY + 1, 'loyalty-worker-background');
    backgroundRunner = await superviseRunner(
      'background',
      () =>
        run({
          ...common,
          logger: loggerOf('background'),
          concurrency: BACKGROUND_CONCURRENCY,
          taskList: background,
          pgPool: backgroundPool,
        }),
      log,
    );
    runners.push(backgroundRunner);
  }
  const deliveries = pick(DELIVERY_TASKS);
  if (Object.keys(deliveries).length) {
    // A connection a job at most, as graphile-worker expects of its pool (it warns otherwise). The
    // delivery tasks query through their own pool (options.sql); this one fetches jobs (one local
    // queue) and records outcomes in batches, so it opens a few connections, not `concurrency`.
    const deliveriesPool = poolOf(concurrency + 2, 'loyalty-worker-deliveries');
    runners.push(
      await superviseRunner(
        'deliveries',
        () =>
          run({
            ...common,
            logger: loggerOf('deliveries'),
            concurrency,
            taskList: deliveries,
            pgPool: deliveriesPool,
            preset: {
              worker: {
                localQueue: { size: Math.max(2, concurrency * 2) },
                completeJobBatchDelay: 5,
                failJobBatchDelay: 5,
              },
            },
          }),
        log,
      ),
    );
  }
  const stallChecks =
    backgroundRunner && background.resume_stalled_jobs
      ? queueEvery(backgroundRunner, 'resume_stalled_jobs', Math.min(60, options.config.stalledJobSeconds / 2))
      : undefined;
  const purges =
    backgroundRunner && background.prune_old_rows
      ? queueEvery(backgroundRunner, 'prune_old_rows', Math.min(600, (options.config.retentionDays * 86_400) / 4))
      : undefined;
  // Registered Apple passes whose expiry passed on their organization's clock: pushed (tasks/wallet-expiries.ts).
  const expiryChecks =
    backgroundRunner && background.wallet_expiries ? queueEvery(backgroundRunner, 'wallet_expiries', 60) : undefined;
  let lastBeatAt: number | null = null;
  const beat = () =>
    void pools[0]?.query('SELECT 1').then(
      () => (lastBeatAt = Date.now()),
      () => {},
    );
  beat();
  const heartbeat = setInterval(beat, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    health: () => ({
      ok: runners.every((r) => r.running()) && lastBeatAt !== null && Date.now() - lastBeatAt < HEARTBEAT_STALE_MS,
      lastBeatAt,
    }),
    stop: async () => {
      clearInterval(heartbeat);
      clearInterval(stallChecks);
      clearInterval(purges);
      clearInterval(expiryChecks);
      await Promise.all(runners.map((r) => r.stop()));
      await webhookClient.close();
      await Promise.all(pools.map((p) => p.end()));
    },
  };
}

/**
 * Queues `task` now and then every `seconds`, under one job key for every process: the copies that
 * several workers on one database queue collapse into one job. Used for the stall check
 * (resume_stalled_jobs: at start, the usual moment after a crash, then every half of
 * LOYALTY_STALLED_JOB_SECONDS, at most every minute) and retention (prune_old_rows: at start, then
 * every 10 minutes or every quarter of LOYALTY_RETENTION_DAYS when that is shorter).
 */
function queueEvery(runner: SupervisedRunner, task: string, seconds: number): NodeJS.Timeout {
  const queue = () => void runner.addJob(task, {}, { jobKey: task }).catch(() => {}); // the database is away: the next tick
  queue();
  const timer = setInterval(queue, Math.max(1, seconds) * 1000);
  timer.unref();
  return timer;
}
