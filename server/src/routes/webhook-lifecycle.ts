import type { Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import type { Schemas } from '../lib/schemas.js';
import { secretBoxOf } from '../lib/secret-box.js';
import { principalOf } from '../plugins/auth.js';
import { recoverDeliveries } from '../services/webhooks/deliveries-recover.js';
import { eventCatalogue } from '../services/webhooks/event-catalogue.js';
import { updateSubscription } from '../services/webhooks/webhook-subscription-state.js';
import { presentSubscription, requireSubscription } from '../services/webhooks/webhook-subscriptions.js';
import { testSubscription } from '../services/webhooks/webhook-test.js';
import { checkSubscriptionUrl, ok, payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

const idOf = (request: Request) => request.params.id as string;

/** The extensions of issue 15: one subscription read and changed, recovery, test pings, the event catalogue. */
export const webhookLifecycleRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/webhook-subscriptions/{id}',
    handler: async (request) =>
      ok(
        presentSubscription(await requireSubscription(appOf(request).sql, principalOf(request), idOf(request))),
      ) satisfies Schemas['WebhookSubscriptionResponse'],
  },
  {
    method: 'PATCH',
    path: '/webhook-subscriptions/{id}',
    handler: async (request, h) => {
      const input = payloadOf<Schemas['UpdateWebhookSubscriptionRequest']>(request);
      if (input.url !== undefined) await checkSubscriptionUrl(request, input.url);
      const { config } = appOf(request);
      return respondInTransaction(request, h, async (tx) => ({
        body: ok(
          await updateSubscription(
            tx,
            principalOf(request),
            idOf(request),
            input,
            config.webhookConcurrencyPerSubscription,
          ),
        ) satisfies Schemas['WebhookSubscriptionResponse'],
      }));
    },
  },
  {
    method: 'POST',
    path: '/webhook-subscriptions/{id}/recover',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        status: 202,
        body: ok(
          await recoverDeliveries(
            tx,
            principalOf(request),
            idOf(request),
            payloadOf<Schemas['RecoverWebhookDeliveriesRequest']>(request),
            appOf(request).config.webhookConcurrencyPerSubscription,
          ),
        ) satisfies Schemas['WebhookDeliveriesRecovered'],
      })),
  },
  {
    method: 'POST',
    path: '/webhook-subscriptions/{id}/test',
    // No transaction: the request waits for a receiver (up to the acknowledgement time) holding
    // no lock and no connection; an Idempotency-Key's answer is stored after (plugins/idempotency.ts).
    handler: async (request) => {
      const app = appOf(request);
      return ok(
        await testSubscription(
          app.sql,
          principalOf(request),
          idOf(request),
          { client: app.webhookClient(), secrets: secretBoxOf(app.config) },
          payloadOf<Schemas['WebhookTestRequest']>(request).sample,
        ),
      ) satisfies Schemas['WebhookTestResponse'];
    },
  },
  {
    method: 'GET',
    path: '/webhook-event-types',
    handler: (request) =>
      ok(eventCatalogue(appOf(request).openapi.document)) satisfies Schemas['WebhookEventTypeListResponse'],
  },
];
