import type { Task } from 'graphile-worker';
import { fanOutEvents } from '../services/deliveries.js';
import type { TaskContext } from './context.js';

/** Queued with the events (services/events.ts): creates their deliveries and wakes the subscriptions' lanes. */
export const fanOutEventsTask =
  ({ sql, config }: TaskContext): Task<'fan_out_events'> =>
  async ({ event_ids }) => {
    await fanOutEvents(sql, event_ids, config.webhookConcurrencyPerSubscription);
  };
