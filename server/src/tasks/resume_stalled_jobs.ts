import type { Task } from 'graphile-worker';
import { wakeOverdueLanes } from '../services/deliveries.js';
import { resumeStalledVoucherJobs } from '../services/voucher-rounds.js';
import type { TaskContext } from './index.js';

/** Seconds without progress after which a voucher job counts as stalled (rounds take well under one). */
export const STALLED_AFTER_SECONDS = 120;

/**
 * Every minute (crontab in worker.ts): a worker killed mid-round leaves its graphile-worker job
 * locked for hours; this queues the job's next round again so the voucher job carries on. The
 * same for delivery lanes: a subscription with a delivery overdue by a minute gets its lanes back.
 */
export const resumeStalledJobsTask = ({ sql, config }: TaskContext): Task => async () => {
  await resumeStalledVoucherJobs(sql, STALLED_AFTER_SECONDS);
  await wakeOverdueLanes(sql, config.webhookConcurrencyPerSubscription);
};
