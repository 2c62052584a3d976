import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import { secretBoxOf } from '../lib/secret-box.js';
import { principalOf } from '../plugins/auth.js';
import { inRemovalTransaction } from '../services/platform/organization-data.js';
import { listDeliveries, retryDelivery } from '../services/webhooks/deliveries-log.js';
import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
  rotateSecret,
} from '../services/webhooks/webhook-subscriptions.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import { checkSubscriptionUrl, ok, payloadOf, queryOf, SUCCESSFUL } from './route-options.js';
import type { RouteDef } from './types.js';

export const webhookRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/webhook-subscriptions',
    handler: async (request) => {
      const { organization_id } = queryOf<QueryOf<'/webhook-subscriptions', 'get'>>(request);
      return ok(
        await listSubscriptions(appOf(request).sql, principalOf(request), organization_id),
      ) satisfies Schemas['WebhookSubscriptionListResponse'];
    },
  },
  {
    method: 'POST',
    path: '/webhook-subscriptions',
    handler: async (request, h) => {
      const input = payloadOf<Schemas['CreateWebhookSubscriptionRequest']>(request);
      await checkSubscriptionUrl(request, input.url); // DNS may be asked: before the transaction opens
      return respondInTransaction(request, h, async (tx) => ({
        status: 201,
        body: ok(
          await createSubscription(tx, principalOf(request), input, secretBoxOf(appOf(request).config)),
        ) satisfies Schemas['WebhookSubscriptionCreatedResponse'],
      }));
    },
  },
  {
    method: 'DELETE',
    path: '/webhook-subscriptions/{id}',
    handler: async (request) => {
      const { sql } = appOf(request);
      // Run again when PostgreSQL ends it to break a deadlock with a lane recording a delivery.
      const data = await inRemovalTransaction(sql, (tx) =>
        deleteSubscription(tx, principalOf(request), request.params.id as string),
      );
      return ok(data) satisfies Schemas['WebhookSubscriptionDeletedResponse'];
    },
  },
  {
    method: 'POST',
    path: '/webhook-subscriptions/{id}/rotate-secret',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: ok(
          await rotateSecret(tx, principalOf(request), request.params.id as string, secretBoxOf(appOf(request).config)),
        ) satisfies Schemas['WebhookSecretRotated'],
      })),
  },
  {
    method: 'GET',
    path: '/webhook-subscriptions/{id}/deliveries',
    handler: async (request) => {
      const query = queryOf<QueryOf<'/webhook-subscriptions/{id}/deliveries', 'get'>>(request);
      const page = await listDeliveries(appOf(request).sql, principalOf(request), request.params.id as string, query);
      return { message: SUCCESSFUL, ...page } satisfies Schemas['WebhookDeliveryListResponse'];
    },
  },
  {
    method: 'POST',
    path: '/webhook-subscriptions/{id}/deliveries/{delivery_id}/retry',
    handler: (request, h) => {
      const { id, delivery_id } = request.params as { id: string; delivery_id: string };
      return respondInTransaction(request, h, async (tx) => ({
        status: 202,
        body: ok(
          await retryDelivery(
            tx,
            principalOf(request),
            id,
            delivery_id,
            appOf(request).config.webhookConcurrencyPerSubscription,
          ),
        ) satisfies Schemas['WebhookDeliveryResponse'],
      }));
    },
  },
];
