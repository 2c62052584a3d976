import type { Task } from 'graphile-worker';
import { fanOutEvents } from '../services/webhooks/deliveries.js';
import type { FAN_OUT_EVENTS } from '../services/platform/outbox.js';
import type { TaskContext } from './context.js';

/** Queued with the events (services/outbox.ts): creates their deliveries and wakes the subscriptions' lanes. */
export const fanOutEventsTask =
  ({ sql, config }: TaskContext): Task<typeof FAN_OUT_EVENTS> =>
  async ({ event_ids }) => {
    await fanOutEvents(sql, event_ids, config.webhookConcurrencyPerSubscription);
  };
