import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Joi from 'joi';
import { type CorsConfig, parseCorsOrigins } from './config-cors.js';
import { type WalletConfig, walletConfigOf, walletConfigProblems, walletEnvSchema } from './config-wallet.js';

/** This package's directory (server/ in the repository, node_modules/@loyalty/server installed). */
const packageRoot = new URL('../', import.meta.url);

/**
 * A file the server reads at run time, found relative to this package, never to the working
 * directory. Inside this repository it is the root's file (the one source); an installed package
 * has no such file beside it (node_modules/@loyalty/) and reads the copy `npm pack` put into it
 * (scripts/server-assets.mjs). The root wins, so a copy left behind by an interrupted pack is never read.
 */
export function packagedFile(name: string): string {
  const repository = fileURLToPath(new URL(`../${name}`, packageRoot));
  return existsSync(repository) ? repository : fileURLToPath(new URL(name, packageRoot));
}

/** The demo fixtures (organizations, brands, clients with their secrets) loaded when LOYALTY_FIXTURES is unset. */
export const demoFixturesPath = packagedFile('fixtures/demo.json');

/**
 * Everything the server reads from its environment, checked once at start-up: a value that does
 * not fit stops the start with one message naming every wrong variable.
 */
export type Config = {
  port: number;
  host: string;
  /** Base of the URLs the server writes into responses (wallet links, page URLs); default: its own address. */
  publicUrl: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  pgPort: number | undefined;
  /** Key of webhook secrets at rest; unset, the embedded database generates one into its data directory. */
  secretKey: string | undefined;
  /** The key before a rotation: it still opens secrets, which start-up seals again with secretKey. */
  secretKeyPrevious: string | undefined;
  /** Fixture file loaded at start ('none': nothing); a relative path is from the working directory. Default: the demo fixtures. */
  fixtures: string;
  worker: boolean;
  /** The request log of GET /request-logs (LOYALTY_REQUEST_LOG=off: not written; the access log on stdout stays). */
  requestLog: boolean;
  webhookAllowInsecure: boolean;
  webhookRetryDelays: number[];
  webhookTimeoutMs: number;
  /** A subscription whose every attempt failed for this long is disabled; 0: never (services/webhooks/subscription-health.ts). */
  webhookDisableAfterSeconds: number;
  /** A subscription with this many deliveries in a row ended failed is disabled; 0: never. */
  webhookDisableAfterFailures: number;
  /**
   * `webhook_subscription.failing` is sent once a subscription has this many deliveries in a row
   * ended failed (below webhookDisableAfterFailures); 0: never. Default a tenth of that, at least 1.
   */
  webhookFailingAfter: number;
  /** Requests per window of one token (LOYALTY_RATE_LIMIT_TOKEN; api-spec: counted per token). */
  rateLimitToken: number;
  rateLimitIp: number;
  rateLimitWindowSeconds: number;
  /** Connections of the pool that serves API requests (streams and workers have pools of their own). */
  dbPoolSize: number;
  /** How long a start waits (retrying with backoff) for a DATABASE_URL that cannot be reached yet. */
  dbWaitSeconds: number;
  /** Longest a handler (and each of its SQL statements) may run before the request fails with 503. */
  requestTimeoutMs: number;
  /** A connection that neither sends nor takes a byte for this long is closed (a stalled reader). */
  socketTimeoutMs: number;
  /** Unpaged member lists and exports streaming at once for one client, all its tokens (LOYALTY_STREAMS_PER_CLIENT, formerly …_PER_TOKEN); more get 429. */
  streamsPerToken: number;
  /** Delivery attempts in flight at once for one webhook subscription (its delivery lanes), across all processes. */
  webhookConcurrencyPerSubscription: number;
  /** Voucher-job lanes without progress and deliveries overdue for this long are taken over (a worker was killed mid-work). */
  stalledJobSeconds: number;
  /** Events, deliveries and their attempts older than this many days are purged (pending deliveries never). */
  retentionDays: number;
  /**
   * Bearer token that GET /metrics asks for, on any address. Unset: /metrics is open on a loopback
   * HOST and off (401, one warning at start) on any other (plugins/metrics.ts `metricsAccess`).
   */
  metricsToken: string | undefined;
  /** The database gauges of GET /metrics are read at most this often; scrapes in between answer the last values. */
  metricsCacheSeconds: number;
  /** API processes of `npm start` on this machine (node:cluster, one shared port); 1: no cluster. */
  apiProcesses: number;
  /** A request's Idempotency-Key claim outlives its last heartbeat (a third of this) by this long: what a crash leaves held. */
  idempotencyLockSeconds: number;
  /** On SIGTERM the API keeps accepting this long before it stops (requests already on their way get in). */
  shutdownGraceMs: number;
  /** LOYALTY_SANDBOX: the sandbox controls (/sandbox/*, `Prefer: fault=…`); default on with the embedded database, off with DATABASE_URL. */
  sandbox: boolean;
  /**
   * LOYALTY_SANDBOX_OPERATOR_TOKEN: the sandbox operator's credential (services/sandbox/sandbox-operator.ts),
   * sent as a bearer token for the whole-server reset and throwaway organizations; unset: no
   * operator. Never logged.
   */
  sandboxOperatorToken: string | undefined;
  /** Wallet passes: Apple signing and pushes, Google Wallet (config-wallet.ts). */
  wallet: WalletConfig;
  /** LOYALTY_CORS_ORIGINS: the origins whose pages may call the server from a browser (config-cors.ts). */
  cors: CorsConfig;
  /** LOYALTY_LOG_LEVEL: the least level of the structured log on stdout (pino's levels, or silent). */
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
};

const schema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  HOST: Joi.string().default('127.0.0.1'),
  LOYALTY_PUBLIC_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .empty(''),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .empty(''),
  LOYALTY_DATA_DIR: Joi.string().default('.loyalty/data'),
  LOYALTY_PG_PORT: Joi.number().integer().min(1).max(65535).empty(''),
  // Required when DATABASE_URL is set (`not` + `otherwise` is Joi's `is` + `then` the other way round).
  LOYALTY_SECRET_KEY: Joi.string()
    .empty('')
    .when('DATABASE_URL', { not: Joi.exist(), otherwise: Joi.required() })
    .messages({
      'any.required':
        'LOYALTY_SECRET_KEY is required with DATABASE_URL (the key of webhook secrets at rest; e.g. `openssl rand -base64 32`)',
    }),
  LOYALTY_SECRET_KEY_PREVIOUS: Joi.string().empty(''),
  LOYALTY_FIXTURES: Joi.string().default(demoFixturesPath),
  LOYALTY_WORKER: Joi.string().valid('on', 'off').default('on'),
  LOYALTY_REQUEST_LOG: Joi.string().valid('on', 'off').default('on'),
  LOYALTY_WEBHOOK_ALLOW_INSECURE: Joi.string().valid('0', '1', '').default(''),
  LOYALTY_WEBHOOK_RETRY_DELAYS: Joi.string()
    .pattern(/^\d+(\.\d+)?(,\d+(\.\d+)?){6}$/)
    .message('LOYALTY_WEBHOOK_RETRY_DELAYS must be 7 comma-separated numbers of seconds')
    .default('30,60,600,3600,10800,21600,86400'),
  LOYALTY_WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(1).default(5000),
  LOYALTY_WEBHOOK_DISABLE_AFTER_SECONDS: Joi.number().min(0).max(31_536_000).empty('').default(432_000),
  LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES: Joi.number().integer().min(0).max(1_000_000).empty('').default(100),
  LOYALTY_WEBHOOK_FAILING_AFTER: Joi.number().integer().min(0).max(1_000_000).empty(''),
  LOYALTY_RATE_LIMIT_TOKEN: Joi.number().integer().min(1).default(600),
  LOYALTY_RATE_LIMIT_IP: Joi.number().integer().min(1).default(60),
  LOYALTY_RATE_LIMIT_WINDOW_SECONDS: Joi.number().integer().min(1).default(60),
  LOYALTY_DB_POOL_SIZE: Joi.number().integer().min(2).max(500).default(10),
  LOYALTY_DB_WAIT_SECONDS: Joi.number().integer().min(0).max(3600).default(30),
  LOYALTY_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  LOYALTY_SOCKET_TIMEOUT_MS: Joi.number()
    .integer()
    .min(200)
    .greater(Joi.ref('LOYALTY_REQUEST_TIMEOUT_MS'))
    .default(60_000)
    .messages({ 'number.greater': 'LOYALTY_SOCKET_TIMEOUT_MS must be greater than LOYALTY_REQUEST_TIMEOUT_MS' }),
  // Per client (all its tokens); the old name, from when the slots were per token, still works.
  LOYALTY_STREAMS_PER_CLIENT: Joi.number().integer().min(1).empty(''),
  LOYALTY_STREAMS_PER_TOKEN: Joi.number().integer().min(1).default(2),
  LOYALTY_WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: Joi.number().integer().min(1).max(64).default(4),
  LOYALTY_STALLED_JOB_SECONDS: Joi.number().integer().min(1).max(86_400).default(60),
  LOYALTY_RETENTION_DAYS: Joi.number().min(0.0001).max(36_500).default(30),
  LOYALTY_METRICS_TOKEN: Joi.string()
    .min(16)
    .max(512)
    .empty('')
    .optional()
    .messages({ 'string.min': 'LOYALTY_METRICS_TOKEN must be at least 16 characters' }),
  LOYALTY_METRICS_CACHE_SECONDS: Joi.number().min(0).max(300).empty('').default(10),
  LOYALTY_API_PROCESSES: Joi.number().integer().min(1).max(64).empty('').default(1),
  LOYALTY_IDEMPOTENCY_LOCK_SECONDS: Joi.number().integer().min(3).max(3600).empty('').default(30),
  LOYALTY_SHUTDOWN_GRACE_MS: Joi.number().integer().min(0).max(600_000).empty('').default(500),
  LOYALTY_SANDBOX: Joi.string()
    .valid('0', '1')
    .empty('')
    .messages({ 'any.only': 'LOYALTY_SANDBOX must be 1 (on) or 0 (off)' }),
  LOYALTY_SANDBOX_OPERATOR_TOKEN: Joi.string().empty('').min(16).max(512).pattern(/^\S+$/).messages({
    'string.min': 'LOYALTY_SANDBOX_OPERATOR_TOKEN must be at least 16 characters',
    'string.max': 'LOYALTY_SANDBOX_OPERATOR_TOKEN must be at most 512 characters',
    'string.pattern.base': 'LOYALTY_SANDBOX_OPERATOR_TOKEN must not contain spaces',
  }),
  LOYALTY_LOG_LEVEL: Joi.string()
    .valid('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent')
    .empty('')
    .default('info'),
  LOYALTY_CORS_ORIGINS: Joi.string().empty(''),
  ...walletEnvSchema,
}).unknown(true);

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  const cors = parseCorsOrigins(value.LOYALTY_CORS_ORIGINS);
  const problems = [
    ...(error?.details.map((d) => d.message) ?? []),
    ...(error ? [] : [...walletConfigProblems(value), ...failingAfterProblems(value)]),
    ...cors.problems,
  ];
  if (problems.length) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return {
    port: value.PORT,
    host: value.HOST,
    publicUrl: value.LOYALTY_PUBLIC_URL?.replace(/\/+$/, ''),
    databaseUrl: value.DATABASE_URL,
    dataDir: value.LOYALTY_DATA_DIR,
    pgPort: value.LOYALTY_PG_PORT,
    secretKey: value.LOYALTY_SECRET_KEY,
    secretKeyPrevious: value.LOYALTY_SECRET_KEY_PREVIOUS,
    fixtures: value.LOYALTY_FIXTURES,
    worker: value.LOYALTY_WORKER === 'on',
    requestLog: value.LOYALTY_REQUEST_LOG === 'on',
    webhookAllowInsecure: value.LOYALTY_WEBHOOK_ALLOW_INSECURE === '1',
    webhookRetryDelays: String(value.LOYALTY_WEBHOOK_RETRY_DELAYS).split(',').map(Number),
    webhookTimeoutMs: value.LOYALTY_WEBHOOK_TIMEOUT_MS,
    webhookDisableAfterSeconds: value.LOYALTY_WEBHOOK_DISABLE_AFTER_SECONDS,
    webhookDisableAfterFailures: value.LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES,
    webhookFailingAfter:
      value.LOYALTY_WEBHOOK_FAILING_AFTER ?? defaultFailingAfter(value.LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES),
    rateLimitToken: value.LOYALTY_RATE_LIMIT_TOKEN,
    rateLimitIp: value.LOYALTY_RATE_LIMIT_IP,
    rateLimitWindowSeconds: value.LOYALTY_RATE_LIMIT_WINDOW_SECONDS,
    dbPoolSize: value.LOYALTY_DB_POOL_SIZE,
    dbWaitSeconds: value.LOYALTY_DB_WAIT_SECONDS,
    requestTimeoutMs: value.LOYALTY_REQUEST_TIMEOUT_MS,
    socketTimeoutMs: value.LOYALTY_SOCKET_TIMEOUT_MS,
    streamsPerToken: value.LOYALTY_STREAMS_PER_CLIENT ?? value.LOYALTY_STREAMS_PER_TOKEN,
    webhookConcurrencyPerSubscription: value.LOYALTY_WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION,
    stalledJobSeconds: value.LOYALTY_STALLED_JOB_SECONDS,
    retentionDays: value.LOYALTY_RETENTION_DAYS,
    metricsToken: value.LOYALTY_METRICS_TOKEN,
    metricsCacheSeconds: value.LOYALTY_METRICS_CACHE_SECONDS,
    apiProcesses: value.LOYALTY_API_PROCESSES,
    logLevel: value.LOYALTY_LOG_LEVEL,
    cors: cors.cors,
    wallet: walletConfigOf(value),
    sandbox: value.LOYALTY_SANDBOX === undefined ? !value.DATABASE_URL : value.LOYALTY_SANDBOX === '1',
    sandboxOperatorToken: value.LOYALTY_SANDBOX_OPERATOR_TOKEN,
    shutdownGraceMs: value.LOYALTY_SHUTDOWN_GRACE_MS,
    idempotencyLockSeconds: value.LOYALTY_IDEMPOTENCY_LOCK_SECONDS,
  };
}

/**
 * The warning's default: a tenth of the disable threshold (10 of 100), at least 1, and 10 when
 * that rule is off; 0 when the threshold is 1 (no count lies below it).
 */
export const defaultFailingAfter = (disableAfterFailures: number): number =>
  disableAfterFailures === 0 ? 10 : disableAfterFailures === 1 ? 0 : Math.max(1, Math.ceil(disableAfterFailures / 10));

/** The warning must come before the disable it warns of. */
function failingAfterProblems(value: Record<string, number | undefined>): string[] {
  const failing = value.LOYALTY_WEBHOOK_FAILING_AFTER;
  const disable = value.LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES ?? 0;
  if (failing === undefined || failing === 0 || disable === 0 || failing < disable) return [];
  return [
    `LOYALTY_WEBHOOK_FAILING_AFTER (${failing}) must be below LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES (${disable}): the warning comes before the disable (0 turns the warning off)`,
  ];
}
