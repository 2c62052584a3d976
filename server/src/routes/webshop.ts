import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import { principalOf } from '../plugins/auth.js';
import { webshopValidationError } from '../services/webshop/webshop-errors.js';
import { createWebshopOrder } from '../services/webshop/webshop-orders.js';
import type { Schemas } from '../lib/schemas.js';
import { payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

/** Webshop endpoints, called with a device token (promotions.scan). */
export const webshopRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/webshop-promotions/orders',
    options: {
      // The spec: 401 (not 403) for a token without promotions.scan, and its own validation body.
      insufficientScopeStatus: 401,
      onValidationError: webshopValidationError,
    },
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        status: 201,
        body: (await createWebshopOrder(
          tx,
          principalOf(request),
          payloadOf<Schemas['WebshopOrderRequest']>(request),
          appOf(request).baseUrl(),
        )) satisfies Schemas['WebshopOrderResponse'],
      })),
  },
];
