import type { Task } from 'graphile-worker';
import { secretBoxOf } from '../lib/secret-box.js';
import { deliverAttempt } from '../services/deliveries.js';
import type { TaskContext } from './index.js';

/** One attempt of one delivery; the attempt schedules its successor when it has to be retried. */
export const deliverWebhookTask = ({ sql, config, webhookClient, gate }: TaskContext & Required<Pick<TaskContext, 'webhookClient'>>): Task => async (payload) => {
  const { delivery_id, attempt } = payload as { delivery_id: string; attempt: number };
  await deliverAttempt(sql, webhookClient, config.webhookRetryDelays, delivery_id, attempt, secretBoxOf(config), gate);
};
