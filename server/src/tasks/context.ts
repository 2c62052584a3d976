import type { Config } from '../config.js';
import type { Sql } from '../db/pool.js';
import type { WebhookClient } from '../lib/safe-fetch.js';
import type { Resolver } from '../lib/ssrf.js';
import type { DeliveryContext } from '../services/webhooks/deliveries.js';

/** What every task is made with (createTaskList in index.ts). */
export type TaskContext = {
  sql: Sql;
  config: Config;
  /** Members per voucher round (tests make it small to see several rounds). */
  roundSize?: number;
  /** The HTTP client of deliveries; made from the config when not given. */
  webhookClient?: WebhookClient;
  /** Name resolution for deliveries (tests point names at 127.0.0.1); the system's by default. */
  resolve?: Resolver;
  /** A certificate APNs' connection trusts besides the system's (tests: a local HTTP/2 endpoint's). */
  apnsCa?: string;
  /** Each webhook delivery attempt once recorded (worker.ts writes a log line of it). */
  onDeliveryAttempt?: DeliveryContext['onAttempt'];
};
