import type { TaskList } from 'graphile-worker';
import type { Config } from '../config.js';
import type { Sql } from '../db/pool.js';

export type TaskContext = { sql: Sql; config: Config };

/** Every graphile-worker task, by name (the task's file name). */
export function createTaskList(_context: TaskContext): TaskList {
  return {};
}
