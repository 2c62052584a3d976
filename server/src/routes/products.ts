import { appOf } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { findProducts } from '../services/webshop/products.js';
import type { Schemas } from '../lib/schemas.js';
import { payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

/** Product lookup for webshops (device token, promotions.scan). */
export const productRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/products/batch',
    handler: async (request) =>
      ({
        success: true,
        ...(await findProducts(
          appOf(request).sql,
          principalOf(request).organizationIds,
          payloadOf<Schemas['ProductBatchRequest']>(request).product_ids,
        )),
      }) satisfies Schemas['ProductBatchResponse'],
  },
];
