import { respondInTransaction } from '../lib/respond.js';
import { redeemCouponPass } from '../services/passes/passes-scan.js';
import { scanStorecard } from '../services/passes/storecard-scan.js';
import type { Schemas } from '../lib/schemas.js';
import { payloadOf, scopeOf } from './route-options.js';
import type { RouteDef } from './types.js';

/** Scans at the till: API tokens with passes.store or device tokens with promotions.scan. */
export const passRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/passes/scan',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: (await redeemCouponPass(
          tx,
          scopeOf(request),
          payloadOf<Schemas['RedeemPassRequest']>(request),
        )) satisfies Schemas['RedeemPassResponse'],
      })),
  },
  {
    method: 'POST',
    path: '/passes/scan/storecard',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const { status, body } = await scanStorecard(
          tx,
          scopeOf(request),
          payloadOf<Schemas['StorecardTransactionRequest']>(request),
        );
        return { status, body: body satisfies Schemas['StorecardTransactionResponse'] };
      }),
  },
];
