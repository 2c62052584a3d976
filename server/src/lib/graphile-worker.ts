import { createRequire } from 'node:module';
import type * as GraphileWorker from 'graphile-worker';

/**
 * graphile-worker, with no configuration read from the working directory. As it loads, it searches
 * the working directory and its parents for a configuration of its own (cosmiconfig:
 * `.graphile-workerrc`, `graphile-worker.config.js`, a "graphile-worker" key in package.json): a
 * broken one stopped the server's start, a JavaScript one ran inside the server, and a `schema` or
 * `maxPoolSize` in it changed the worker's. Everything the server's runners need is given
 * explicitly (worker.ts), so that search answers nothing here. Every module of the server imports
 * graphile-worker from this file, never from the package (types aside).
 */
const require = createRequire(import.meta.url);
const fromWorker = createRequire(require.resolve('graphile-worker'));
const cosmiconfigId = fromWorker.resolve('cosmiconfig');
type Cosmiconfig = { cosmiconfigSync: (name: string, options?: unknown) => { search: () => unknown } };
const cosmiconfig = fromWorker('cosmiconfig') as Cosmiconfig;
const cached = require.cache[cosmiconfigId];
if (cached) {
  cached.exports = {
    ...cosmiconfig,
    cosmiconfigSync: (name: string, options?: unknown) =>
      name === 'graphile-worker' ? { search: () => null } : cosmiconfig.cosmiconfigSync(name, options),
  };
}

const worker = require('graphile-worker') as typeof GraphileWorker;

export const { run, runMigrations } = worker;
export const Logger = worker.Logger;
export type Logger = GraphileWorker.Logger;
export type { LogLevel, Runner, Task, TaskList } from 'graphile-worker';
