import type { Task } from 'graphile-worker';
import { issueVoucherRound } from '../services/vouchers/voucher-rounds.js';
import type { TaskContext } from './index.js';

/** One round of one lane of a voucher job; the round queues the lane's next one in its own transaction. */
export const issueVoucherRoundTask =
  ({ sql, roundSize }: TaskContext): Task =>
  async (payload) => {
    const { job_id, lane = 0 } = payload as { job_id: string; lane?: number };
    await issueVoucherRound(sql, job_id, { lane, roundSize });
  };
