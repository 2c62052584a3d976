import { respondInTransaction } from '../lib/respond.js';
import { setSubscription, setSubscriptionBulk } from '../services/members/members-subscription.js';
import type { Schemas } from '../lib/schemas.js';
import { ok, payloadOf, scopeOf } from './route-options.js';
import type { RouteDef } from './types.js';

/** PATCH subscribes/unsubscribes one member by e-mail; POST does it for up to 2000 e-mails. */
const single = (subscribe: boolean): RouteDef => ({
  method: 'PATCH',
  path: subscribe ? '/members/subscribe' : '/members/unsubscribe',
  handler: (request, h) =>
    respondInTransaction(request, h, async (tx) => ({
      body: ok(
        await setSubscription(tx, scopeOf(request), payloadOf<Schemas['SubscriptionRequest']>(request), subscribe),
      ) satisfies Schemas['MessageText'],
    })),
});

const bulk = (subscribe: boolean): RouteDef => ({
  method: 'POST',
  path: subscribe ? '/members/subscribe' : '/members/unsubscribe',
  handler: (request, h) =>
    respondInTransaction(request, h, async (tx) => ({
      body: ok(
        await setSubscriptionBulk(
          tx,
          scopeOf(request),
          payloadOf<Schemas['BulkSubscriptionRequest']>(request),
          subscribe,
        ),
      ) satisfies Schemas['BulkSubscriptionResponse'],
    })),
});

export const memberSubscriptionRoutes: RouteDef[] = [single(true), single(false), bulk(true), bulk(false)];
