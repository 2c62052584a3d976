import type { Config } from '../config.js';
import { createPool, type Sql } from './pool.js';

/**
 * One pool per purpose (DESIGN "resources are shared fairly"): API requests, the chunk queries of
 * streamed lists, and the worker's tasks never wait for each other's connections. graphile-worker
 * keeps a small pool of its own for fetching and completing jobs.
 */
export type Pools = { api: Sql; streams: Sql; worker: Sql; end: () => Promise<void> };

export const WORKER_POOL_SIZE = 8;
export const streamsPoolSize = (apiPoolSize: number) => Math.max(2, Math.ceil(apiPoolSize / 4));

export function createPools(url: string, config: Pick<Config, 'dbPoolSize' | 'requestTimeoutMs'>): Pools {
  // A statement or an idle transaction of a request outliving the request itself is cut off by PostgreSQL.
  const bounded = {
    statement_timeout: config.requestTimeoutMs,
    idle_in_transaction_session_timeout: config.requestTimeoutMs,
  };
  const api = createPool(url, { max: config.dbPoolSize, connection: bounded });
  const streams = createPool(url, {
    max: streamsPoolSize(config.dbPoolSize),
    connection: { ...bounded, application_name: 'loyalty-server-streams' },
  });
  const worker = createPool(url, { max: WORKER_POOL_SIZE, connection: { application_name: 'loyalty-worker' } });
  return {
    api,
    streams,
    worker,
    end: async () => {
      await Promise.all([api.end({ timeout: 5 }), streams.end({ timeout: 5 }), worker.end({ timeout: 5 })]);
    },
  };
}
