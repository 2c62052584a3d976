import type { Request } from '@hapi/hapi';
import type { Config } from './config.js';
import type { Sql } from './db/pool.js';
import type { OpenApiDocument } from './lib/openapi.js';
import type { WebhookClient } from './lib/safe-fetch.js';
import type { StreamSlots } from './lib/stream-slots.js';
import type { ProcessClock } from './services/sandbox/sandbox-clock.js';

/**
 * What every route and plugin may reach through `request.server.app` (`server.app`): hapi's
 * `ServerApplicationState` is this type (below), so no layer needs a cast or an import of this file.
 */
export type AppContext = {
  sql: Sql;
  /** The pool of streamed lists' chunk queries (the API pool when not given). */
  streamSql: Sql;
  /** Streamed responses in flight per token (config.streamsPerToken). */
  streamSlots: StreamSlots;
  config: Config;
  openapi: { document: OpenApiDocument; yamlText: string };
  /** Public base URL, used in paginator links and wallet URLs. */
  baseUrl: () => string;
  /** The last migration this version knows: readiness checks that the database has it. */
  lastMigration?: string;
  /** The HTTP client of test pings (POST /webhook-subscriptions/{id}/test), made at first use, closed with the server. */
  webhookClient: () => WebhookClient;
  /** The state of this process's worker, when it runs one (readiness). */
  workerHealth?: () => WorkerHealth;
  /** The sandbox clock as this process knows it (config.sandbox only): routes/sandbox.ts refreshes it after a change. */
  sandboxClock?: ProcessClock;
};

/** Whether a process's worker works: its runners run and its heartbeat (a query on its own pool) is recent. */
export type WorkerHealth = { ok: boolean; lastBeatAt: number | null };

declare module '@hapi/hapi' {
  interface ServerApplicationState extends AppContext {}
}

/** The routes' short form of `request.server.app`. */
export const appOf = (request: Request): AppContext => request.server.app;
