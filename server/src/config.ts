import Joi from 'joi';

/** Everything the server reads from its environment, checked once at start-up (CONTRACT.md). */
export type Config = {
  port: number;
  host: string;
  /** Base of the URLs the server writes into responses (wallet links, page URLs); default: its own address. */
  publicUrl: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  pgPort: number | undefined;
  fixtures: string;
  worker: boolean;
  webhookAllowInsecure: boolean;
  webhookRetryDelays: number[];
  webhookTimeoutMs: number;
  rateLimitToken: number;
  rateLimitIp: number;
  rateLimitWindowSeconds: number;
};

const schema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  HOST: Joi.string().default('127.0.0.1'),
  LOYALTY_PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }).empty(''),
  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }).empty(''),
  LOYALTY_DATA_DIR: Joi.string().default('.loyalty/data'),
  LOYALTY_PG_PORT: Joi.number().integer().min(1).max(65535).empty(''),
  LOYALTY_FIXTURES: Joi.string().default('fixtures/demo.json'),
  LOYALTY_WORKER: Joi.string().valid('on', 'off').default('on'),
  LOYALTY_WEBHOOK_ALLOW_INSECURE: Joi.string().valid('0', '1', '').default(''),
  LOYALTY_WEBHOOK_RETRY_DELAYS: Joi.string()
    .pattern(/^\d+(\.\d+)?(,\d+(\.\d+)?){6}$/)
    .message('LOYALTY_WEBHOOK_RETRY_DELAYS must be 7 comma-separated numbers of seconds')
    .default('30,60,600,3600,10800,21600,86400'),
  LOYALTY_WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(1).default(5000),
  LOYALTY_RATE_LIMIT_TOKEN: Joi.number().integer().min(1).default(600),
  LOYALTY_RATE_LIMIT_IP: Joi.number().integer().min(1).default(60),
  LOYALTY_RATE_LIMIT_WINDOW_SECONDS: Joi.number().integer().min(1).default(60),
}).unknown(true);

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) throw new ConfigError(`Invalid configuration: ${error.details.map((d) => d.message).join('; ')}`);
  return {
    port: value.PORT,
    host: value.HOST,
    publicUrl: value.LOYALTY_PUBLIC_URL?.replace(/\/+$/, ''),
    databaseUrl: value.DATABASE_URL,
    dataDir: value.LOYALTY_DATA_DIR,
    pgPort: value.LOYALTY_PG_PORT,
    fixtures: value.LOYALTY_FIXTURES,
    worker: value.LOYALTY_WORKER === 'on',
    webhookAllowInsecure: value.LOYALTY_WEBHOOK_ALLOW_INSECURE === '1',
    webhookRetryDelays: String(value.LOYALTY_WEBHOOK_RETRY_DELAYS).split(',').map(Number),
    webhookTimeoutMs: value.LOYALTY_WEBHOOK_TIMEOUT_MS,
    rateLimitToken: value.LOYALTY_RATE_LIMIT_TOKEN,
    rateLimitIp: value.LOYALTY_RATE_LIMIT_IP,
    rateLimitWindowSeconds: value.LOYALTY_RATE_LIMIT_WINDOW_SECONDS,
  };
}
