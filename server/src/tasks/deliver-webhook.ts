import type { Task } from 'graphile-worker';
import { secretBoxOf } from '../lib/secret-box.js';
import { runDeliveryLane, wakeDeliveryLanes } from '../services/webhooks/deliveries.js';
import type { TaskContext } from './context.js';

/** A delivery lane of one subscription (services/deliveries.ts): sends its due deliveries for a slice of time. */
export const deliverWebhookTask =
  ({
    sql,
    config,
    webhookClient,
    onDeliveryAttempt,
  }: TaskContext & Required<Pick<TaskContext, 'webhookClient'>>): Task<'deliver_webhook'> =>
  async (p) => {
    const lanes = config.webhookConcurrencyPerSubscription;
    if ('delivery_id' in p) {
      const [row] = await sql<
        { subscription_id: string }[]
      >`SELECT subscription_id FROM webhook_deliveries WHERE id = ${p.delivery_id}`;
      if (row) await wakeDeliveryLanes(sql, [row.subscription_id], lanes);
      return;
    }
    if (p.lane >= lanes) return; // a lane of a larger setting than this process's
    await runDeliveryLane(
      {
        sql,
        client: webhookClient,
        retryDelays: config.webhookRetryDelays,
        secrets: secretBoxOf(config),
        timeoutMs: config.webhookTimeoutMs,
        lanes,
        leaseMarginSeconds: config.stalledJobSeconds,
        onAttempt: onDeliveryAttempt,
        healthRules: {
          failingSeconds: config.webhookDisableAfterSeconds,
          consecutiveFailures: config.webhookDisableAfterFailures,
          failingAfter: config.webhookFailingAfter,
        },
      },
      p.subscription_id,
      p.lane,
    );
  };
