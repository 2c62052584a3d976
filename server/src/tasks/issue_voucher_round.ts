import type { Task } from 'graphile-worker';
import { issueVoucherRound } from '../services/voucher-rounds.js';
import type { TaskContext } from './index.js';

/** One round of a voucher job; the round queues the next one in its own transaction. */
export const issueVoucherRoundTask = ({ sql, roundSize }: TaskContext): Task => async (payload) => {
  const { job_id } = payload as { job_id: string };
  await issueVoucherRound(sql, job_id, { roundSize });
};
