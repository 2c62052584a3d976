import type { TaskList } from 'graphile-worker';
import type { Config } from '../config.js';
import type { Sql } from '../db/pool.js';
import { createWebhookClient, type WebhookClient } from '../lib/safe-fetch.js';
import type { Resolver } from '../lib/ssrf.js';
import type { DeliveryContext } from '../services/webhooks/deliveries.js';
import { FAN_OUT_EVENTS } from '../services/platform/outbox.js';
import { deliverWebhookTask } from './deliver_webhook.js';
import { fanOutEventsTask } from './fan_out_events.js';
import { issueVoucherRoundTask } from './issue_voucher_round.js';
import { pruneOldRowsTask } from './prune_old_rows.js';
import { resumeStalledJobsTask } from './resume_stalled_jobs.js';

export type TaskContext = {
  sql: Sql;
  config: Config;
  /** Members per voucher round (tests make it small to see several rounds). */
  roundSize?: number;
  /** The HTTP client of deliveries; made from the config when not given. */
  webhookClient?: WebhookClient;
  /** Name resolution for deliveries (tests point names at 127.0.0.1); the system's by default. */
  resolve?: Resolver;
  /** Each webhook delivery attempt once recorded (worker.ts writes a log line of it). */
  onDeliveryAttempt?: DeliveryContext['onAttempt'];
};

/** Tasks of the background runner: crons, fan-out and voucher rounds never wait behind deliveries. */
export const BACKGROUND_TASKS = ['issue_voucher_round', FAN_OUT_EVENTS, 'resume_stalled_jobs', 'prune_old_rows'];
/** Tasks of the delivery runner. */
export const DELIVERY_TASKS = ['deliver_webhook'];

/** Every graphile-worker task, by name (the task's file name). */
export function createTaskList(context: TaskContext): TaskList {
  const webhookClient =
    context.webhookClient ??
    createWebhookClient({
      timeoutMs: context.config.webhookTimeoutMs,
      allowInsecure: context.config.webhookAllowInsecure,
      resolve: context.resolve,
    });
  return {
    issue_voucher_round: issueVoucherRoundTask(context),
    [FAN_OUT_EVENTS]: fanOutEventsTask(context),
    deliver_webhook: deliverWebhookTask({ ...context, webhookClient }),
    resume_stalled_jobs: resumeStalledJobsTask(context),
    prune_old_rows: pruneOldRowsTask(context),
  };
}
