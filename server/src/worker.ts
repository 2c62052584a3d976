import { run, type Runner } from 'graphile-worker';
import type { Config } from './config.js';
import type { Sql } from './db/pool.js';
import { quietLogger } from './db/migrate.js';
import { createTaskList } from './tasks/index.js';

/** The graphile-worker runner: in the server process by default, or alone (`npm run worker`). */
export async function startWorker(options: { connectionString: string; sql: Sql; config: Config; concurrency?: number }): Promise<Runner> {
  return run({
    connectionString: options.connectionString,
    concurrency: options.concurrency ?? 4,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: quietLogger,
    taskList: createTaskList({ sql: options.sql, config: options.config }),
  });
}
