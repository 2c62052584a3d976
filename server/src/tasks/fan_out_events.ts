import type { Task } from 'graphile-worker';
import { fanOutEvents } from '../services/webhooks/deliveries.js';
import type { TaskContext } from './index.js';

/** Queued with the events (services/outbox.ts): creates their deliveries and wakes the subscriptions' lanes. */
export const fanOutEventsTask =
  ({ sql, config }: TaskContext): Task =>
  async (payload) => {
    const { event_ids } = payload as { event_ids: string[] };
    await fanOutEvents(sql, event_ids, config.webhookConcurrencyPerSubscription);
  };
