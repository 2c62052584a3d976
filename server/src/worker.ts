import { run, type Runner } from 'graphile-worker';
import type { Config } from './config.js';
import type { Sql } from './db/pool.js';
import { quietLogger } from './db/migrate.js';
import { failFastResolver } from './lib/dns-failures.js';
import { createWebhookClient } from './lib/safe-fetch.js';
import { systemResolver } from './lib/ssrf.js';
import { createSubscriptionGate } from './lib/subscription-gate.js';
import { BACKGROUND_TASKS, createTaskList, DELIVERY_TASKS, type TaskContext } from './tasks/index.js';

/** Webhook attempts at once per process: they mostly wait on the network. */
export const DEFAULT_CONCURRENCY = 32;
/** Voucher rounds, fan-out and crons at once per process: database work, two cores. */
export const BACKGROUND_CONCURRENCY = 4;
/** Unclaimed jobs of a batch go back to the database after this long (while a subscription is full, batches pause). */
const LOCAL_QUEUE_TTL_MS = 2000;

/** The worker of one process: two graphile-worker runners, stopped and awaited together. */
export type WorkerRunner = { stop: () => Promise<void>; promise: Promise<void> };

/**
 * The graphile-worker runners: in the server process by default, or alone (`npm run worker`).
 *
 * Two runners, each with its own tasks and connections (issue 11: one dead receiver stalled
 * every tenant's background work): a background runner for voucher rounds, event fan-out and
 * crons, and a delivery runner for webhook attempts. Deliveries are capped per subscription
 * (config.webhookConcurrencyPerSubscription): while a subscription is full, the delivery runner
 * fetches only other subscriptions' jobs (forbiddenFlags), so a slow or dead receiver uses its
 * own share of the workers and no more. When none is full, jobs are fetched in batches (local
 * queue) and completions written in batches: what lets one process send hundreds of attempts a
 * second.
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
}): Promise<WorkerRunner> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const webhookClient = createWebhookClient({
    timeoutMs: options.config.webhookTimeoutMs,
    allowInsecure: options.config.webhookAllowInsecure,
    resolve: failFastResolver(options.tasks?.resolve ?? systemResolver),
    connections: concurrency,
  });
  const gate = createSubscriptionGate(options.config.webhookConcurrencyPerSubscription);
  const all = createTaskList({ ...options.tasks, sql: options.sql, config: options.config, webhookClient, gate });
  const pick = (names: string[]) =>
    Object.fromEntries(Object.entries(all).filter(([name]) => names.includes(name) && (!options.only || options.only.includes(name))));
  const common = { connectionString: options.connectionString, noHandleSignals: true, pollInterval: options.pollInterval ?? 1000, logger: quietLogger };

  const runners: Runner[] = [];
  const background = pick(BACKGROUND_TASKS);
  if (Object.keys(background).length) {
    runners.push(await run({
      ...common,
      concurrency: BACKGROUND_CONCURRENCY,
      taskList: background,
      crontab: background.resume_stalled_jobs ? '* * * * * resume_stalled_jobs' : '',
      preset: { worker: { maxPoolSize: BACKGROUND_CONCURRENCY + 1 } },
    }));
  }
  const deliveries = pick(DELIVERY_TASKS);
  if (Object.keys(deliveries).length) {
    runners.push(await run({
      ...common,
      concurrency,
      taskList: deliveries,
      crontab: '',
      forbiddenFlags: gate.forbiddenFlags,
      preset: {
        worker: {
          maxPoolSize: Math.min(10, concurrency + 2),
          localQueue: { size: Math.max(2, concurrency * 2), ttl: LOCAL_QUEUE_TTL_MS },
          completeJobBatchDelay: 5,
          failJobBatchDelay: 5,
        },
      },
    }));
  }
  const promise = Promise.all(runners.map((r) => r.promise)).then(() => {});
  void promise.finally(() => webhookClient.close()).catch(() => {});
  return {
    promise,
    stop: async () => {
      await Promise.all(runners.map((r) => r.stop()));
    },
  };
}
