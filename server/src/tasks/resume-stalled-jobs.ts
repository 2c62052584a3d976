import type { Task } from 'graphile-worker';
import { wakeOverdueLanes } from '../services/webhooks/deliveries.js';
import { resumeStalledVoucherJobs } from '../services/vouchers/voucher-rounds.js';
import { resumeStalledFanOuts } from '../services/platform/outbox.js';
import type { TaskContext } from './context.js';

/**
 * Queued when a worker starts (the usual moment after a crash) and then every half of
 * LOYALTY_STALLED_JOB_SECONDS (queueEvery in worker.ts). A worker killed mid-work leaves its
 * graphile-worker jobs locked for hours; once a voucher job's lane has made no progress for
 * config.stalledJobSeconds (default 60; rounds take well under a second), its next round is queued
 * again so the voucher job carries on, and a subscription with a delivery overdue by as long gets
 * its lanes back, and a fan-out job held as long is freed to run again.
 */
export const resumeStalledJobsTask =
  ({ sql, config }: TaskContext): Task<'resume_stalled_jobs'> =>
  async () => {
    await resumeStalledVoucherJobs(sql, config.stalledJobSeconds);
    await resumeStalledFanOuts(sql, config.stalledJobSeconds);
    await wakeOverdueLanes(sql, config.webhookConcurrencyPerSubscription, config.stalledJobSeconds);
  };
