import type { Task } from 'graphile-worker';
import { issueVoucherRound } from '../services/vouchers/voucher-rounds.js';
import type { TaskContext } from './context.js';

/** One round of one lane of a voucher job; the round queues the lane's next one in its own transaction. */
export const issueVoucherRoundTask =
  ({ sql, roundSize }: TaskContext): Task<'issue_voucher_round'> =>
  async ({ job_id, lane = 0 }) => {
    await issueVoucherRound(sql, job_id, { lane, roundSize });
  };
