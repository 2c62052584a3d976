import Hapi, { type Request, type Server } from '@hapi/hapi';
import type { Config } from './config.js';
import type { AppContext, WorkerHealth } from './context.js';
import { migrationFiles } from './db/migrate.js';
import type { Sql } from './db/pool.js';
import { corsGroupOf, routeCors } from './lib/cors.js';
import { listOperations, loadOpenApi } from './lib/openapi.js';
import { authPlugin } from './plugins/auth.js';
import { payloadOptionsFor } from './plugins/content-type.js';
import { errorsPlugin } from './plugins/errors.js';
import { getBodyPlugin } from './plugins/get-body.js';
import { idempotencyPlugin } from './plugins/idempotency.js';
import { metricsPlugin } from './plugins/metrics.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { requestIdOf, requestIdPlugin } from './plugins/request-id.js';
import { requestLogPlugin } from './plugins/request-log.js';
import { requestLogStorePlugin } from './plugins/request-log-store.js';
import { sandboxFaultsPlugin } from './plugins/sandbox-faults.js';
import type { Logger } from './lib/logger.js';
import { createValidators, hapiValidator } from './plugins/validation.js';
import { createStreamSlots } from './lib/stream-slots.js';
import { createWebhookClient, type WebhookClient } from './lib/safe-fetch.js';
import { routes as allRoutes } from './routes/index.js';
import type { RouteDef } from './routes/types.js';
import { createTokenResolver, type Principal } from './services/platform/tokens.js';
import { SANDBOX_PATH_PREFIX } from './routes/sandbox.js';
import { createProcessClock } from './services/sandbox/sandbox-clock.js';
import { withOperator } from './services/sandbox/sandbox-operator.js';

export type ServerOptions = {
  sql: Sql;
  /** Pool of the chunk queries of streamed lists (db/pools.ts); the API pool when not given. */
  streamSql?: Sql;
  config: Config;
  routes?: RouteDef[];
  log?: (message: string) => void;
  /** The state of the worker this process runs (start.ts): /health/ready checks it. */
  workerHealth?: () => WorkerHealth;
  /** The structured log (lib/logger.ts): an access line per request, the database's loss and return. None: no access lines (tests). */
  logger?: Logger;
};

/** Composes the API server without listening (tests use `server.inject`; start.ts listens). */
export async function createServer({
  sql,
  streamSql = sql,
  config,
  routes = allRoutes,
  log = console.error,
  workerHealth,
  logger,
}: ServerOptions): Promise<Server> {
  const openapi = loadOpenApi();
  const server = Hapi.server({
    port: config.port,
    host: config.host,
    debug: false,
    router: { stripTrailingSlash: true },
    routes: {
      payload: { maxBytes: 5 * 1024 * 1024 },
      response: { emptyStatusCode: 204 },
      state: { parse: false, failAction: 'ignore' },
      // A handler that runs too long answers 503; a connection idle this long (a reader that takes
      // nothing, a client that sends nothing) is closed.
      timeout: { server: config.requestTimeoutMs, socket: config.socketTimeoutMs },
    },
  });
  let webhookClient: WebhookClient | undefined;
  const app: AppContext = {
    sql,
    streamSql,
    streamSlots: createStreamSlots(config.streamsPerToken),
    config,
    openapi,
    baseUrl: () => config.publicUrl ?? server.info.uri ?? `http://${config.host}:${config.port}`,
    lastMigration: (await migrationFiles()).at(-1),
    workerHealth,
    sandboxClock: config.sandbox ? createProcessClock(sql) : undefined,
    webhookClient: () => {
      webhookClient ??= createWebhookClient({
        timeoutMs: config.webhookTimeoutMs,
        allowInsecure: config.webhookAllowInsecure,
        connections: 8,
      });
      return webhookClient;
    },
  };
  server.app = app;
  server.ext('onPostStop', async () => {
    await webhookClient?.close();
  });

  // The database's loss and return (once each): the stderr line as before, and a structured record.
  const notice = logger
    ? (line: string) => {
        log(line);
        logger[/reachable again/.test(line) ? 'info' : 'warn'](
          { event: /reachable again/.test(line) ? 'database_recovered' : 'database_lost' },
          line.replace(/^loyalty: /, ''),
        );
      }
    : log;
  await server.register([
    { plugin: metricsPlugin },
    { plugin: requestIdPlugin },
    ...(logger ? [{ plugin: requestLogPlugin, options: { logger } }] : []),
    ...(config.requestLog ? [{ plugin: requestLogStorePlugin, options: { sql, log } }] : []),
    {
      plugin: errorsPlugin,
      options: {
        log: (error: Error, request: Request) =>
          log(`loyalty: internal error (request ${requestIdOf(request)}): ${error.stack ?? error.message}`),
        notice,
      },
    },
    {
      plugin: authPlugin,
      options: {
        // In sandbox mode the operator's credential (LOYALTY_SANDBOX_OPERATOR_TOKEN) is a principal too.
        resolve: withOperator(
          createTokenResolver(sql, { clock: app.sandboxClock }),
          config.sandbox ? config.sandboxOperatorToken : undefined,
        ),
        // The rate limiter (registered below) counts the token's request and checks it is still live.
        admit: (request: Request, principal: Principal) =>
          server.plugins['loyalty-rate-limit'].admit(request, principal),
      },
    },
    { plugin: getBodyPlugin },
    {
      plugin: rateLimitPlugin,
      // Readiness is probed by orchestrators and must answer while the database (and so the counters) is down.
      options: {
        sql,
        exempt: ['/health', '/health/ready', '/metrics'],
        tokenLimit: config.rateLimitToken,
        ipLimit: config.rateLimitIp,
        windowSeconds: config.rateLimitWindowSeconds,
      },
    },
    { plugin: idempotencyPlugin, options: { sql, lockSeconds: config.idempotencyLockSeconds } },
    ...(config.sandbox ? [{ plugin: sandboxFaultsPlugin, options: { sql } }] : []),
  ]);

  const operations = listOperations(openapi.document);
  const validatorsFor = createValidators(openapi.document);
  // The sandbox controls exist only in sandbox mode (else 404 like any unknown path).
  for (const def of routes.filter((r) => config.sandbox || !r.path.startsWith(SANDBOX_PATH_PREFIX))) {
    const op = operations.find((o) => o.method === def.method && o.path === def.path);
    if (!op) throw new Error(`Route ${def.method} ${def.path} is not described in openapi.yaml`);
    const needsToken = ((op.raw.security as unknown[] | undefined) ?? [{}]).length > 0;
    const v = validatorsFor(op);
    const { insufficientScopeStatus, onValidationError, plugins, ...options } = def.options ?? {};
    server.route({
      method: def.method,
      path: def.path,
      handler: def.handler,
      options: {
        ...options,
        ...(def.method !== 'GET' && { payload: payloadOptionsFor(openapi.document, op, options.payload) }),
        plugins: { ...plugins, loyalty: { operationId: op.operationId, insufficientScopeStatus } },
        cors: routeCors(config.cors, corsGroupOf(op, needsToken)),
        auth: needsToken
          ? { strategy: 'token', access: op.abilities.length ? { scope: op.abilities } : undefined }
          : false,
        validate: {
          ...(v.params && { params: hapiValidator(v.params, onValidationError) }),
          ...(v.query && { query: hapiValidator(v.query, onValidationError) }),
          ...(v.payload && { payload: hapiValidator(v.payload, onValidationError) }),
        },
      },
    });
  }
  return server;
}
