import { run, type Runner } from 'graphile-worker';
import type { Config } from './config.js';
import type { Sql } from './db/pool.js';
import { quietLogger } from './db/migrate.js';
import { createWebhookClient } from './lib/safe-fetch.js';
import { createTaskList, type TaskContext } from './tasks/index.js';

/** Jobs run at once per process: webhook attempts mostly wait on the network. */
export const DEFAULT_CONCURRENCY = 32;

/**
 * The graphile-worker runner: in the server process by default, or alone (`npm run worker`).
 * Jobs are fetched in batches (local queue) and completions written in batches, which is what
 * lets one process send hundreds of webhook attempts per second.
 */
export async function startWorker(options: {
  connectionString: string;
  sql: Sql;
  config: Config;
  concurrency?: number;
  /** Tests: round size, name resolution, a task list without some tasks. */
  tasks?: Partial<Omit<TaskContext, 'sql' | 'config'>>;
  only?: string[];
  pollInterval?: number;
}): Promise<Runner> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const webhookClient = createWebhookClient({
    timeoutMs: options.config.webhookTimeoutMs,
    allowInsecure: options.config.webhookAllowInsecure,
    resolve: options.tasks?.resolve,
    connections: concurrency,
  });
  let taskList = createTaskList({ ...options.tasks, sql: options.sql, config: options.config, webhookClient });
  if (options.only) taskList = Object.fromEntries(Object.entries(taskList).filter(([name]) => options.only!.includes(name)));
  const runner = await run({
    connectionString: options.connectionString,
    concurrency,
    noHandleSignals: true,
    pollInterval: options.pollInterval ?? 1000,
    logger: quietLogger,
    taskList,
    crontab: taskList.resume_stalled_jobs ? '* * * * * resume_stalled_jobs' : '',
    preset: {
      worker: {
        maxPoolSize: Math.min(10, concurrency + 2),
        localQueue: { size: Math.max(2, concurrency * 2) },
        completeJobBatchDelay: 5,
        failJobBatchDelay: 5,
      },
    },
  });
  void runner.promise.finally(() => webhookClient.close()).catch(() => {});
  return runner;
}
