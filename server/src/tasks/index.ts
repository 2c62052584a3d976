import type { Task, TaskList } from 'graphile-worker';
import { createWebhookClient } from '../lib/safe-fetch.js';
import { FAN_OUT_EVENTS } from '../services/platform/outbox.js';
import type { TaskContext } from './context.js';
import './payloads.js'; // the tasks' names and payloads (GraphileWorker.Tasks)
import { deliverWebhookTask } from './deliver-webhook.js';
import { fanOutEventsTask } from './fan-out-events.js';
import { issueVoucherRoundTask } from './issue-voucher-round.js';
import { pruneOldRowsTask } from './prune-old-rows.js';
import { resumeStalledJobsTask } from './resume-stalled-jobs.js';
import { walletExpiriesTask } from './wallet-expiries.js';
import { walletPushTask } from './wallet-push.js';

export type { TaskContext } from './context.js';

type TaskName = keyof GraphileWorker.Tasks;

/** Tasks of the background runner: crons, fan-out and voucher rounds never wait behind deliveries. */
export const BACKGROUND_TASKS: TaskName[] = [
  'issue_voucher_round',
  FAN_OUT_EVENTS,
  'resume_stalled_jobs',
  'prune_old_rows',
  'wallet_expiries',
];
/** Tasks of the delivery runner: requests to other hosts (webhook receivers, APNs). */
export const DELIVERY_TASKS: TaskName[] = ['deliver_webhook', 'wallet_push'];

/**
 * Every graphile-worker task, by its job name (payloads.ts): the names never change with a file's
 * name, jobs queued before an upgrade keep them.
 */
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
    wallet_push: walletPushTask(context),
    wallet_expiries: walletExpiriesTask(context),
  } satisfies { [Name in TaskName]: Task<Name> };
}
