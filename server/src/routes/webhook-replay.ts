import type { Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import type { Schemas } from '../lib/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { replayMissingEvents } from '../services/webhooks/deliveries-replay.js';
import { resendEvent } from '../services/webhooks/event-resend.js';
import { ok, payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

const idOf = (request: Request) => request.params.id as string;

/** The extensions of issue 29: what a subscription missed, replayed; one event sent again. */
export const webhookReplayRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/webhook-subscriptions/{id}/replay-missing',
    handler: (request, h) => {
      const { config } = appOf(request);
      return respondInTransaction(request, h, async (tx) => ({
        status: 202,
        body: ok(
          await replayMissingEvents(
            tx,
            principalOf(request),
            idOf(request),
            payloadOf<Schemas['ReplayMissingEventsRequest']>(request),
            { lanes: config.webhookConcurrencyPerSubscription, retentionDays: config.retentionDays },
          ),
        ) satisfies Schemas['ReplayMissingEventsResponse'],
      }));
    },
  },
  {
    method: 'POST',
    path: '/events/{id}/resend',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        status: 202,
        body: ok(
          await resendEvent(
            tx,
            principalOf(request),
            idOf(request),
            payloadOf<Schemas['ResendEventRequest']>(request),
            appOf(request).config.webhookConcurrencyPerSubscription,
          ),
        ) satisfies Schemas['WebhookDeliveryResponse'],
      })),
  },
];
