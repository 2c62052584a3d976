import type { Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import { listMemberPasses, setFavouriteLocation } from '../services/members/members-passes.js';
import { issuePassToMember } from '../services/passes/passes-issue.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import { payloadOf, queryOf, scopeOf } from './route-options.js';
import type { RouteDef } from './types.js';

const pageArgs = (request: Request, kind: 'coupon' | 'storecard') => {
  const uuid = request.params.uuid as string;
  const path = `${appOf(request).baseUrl()}/members/${encodeURIComponent(uuid)}/${kind}s`;
  return [
    appOf(request).sql,
    scopeOf(request),
    uuid,
    queryOf<QueryOf<'/members/{uuid}/coupons', 'get'>>(request),
    path,
  ] as const;
};

const passLists: RouteDef[] = [
  {
    method: 'GET',
    path: '/members/{uuid}/coupons',
    handler: async (request) => {
      const [sql, scope, uuid, query, path] = pageArgs(request, 'coupon');
      return (await listMemberPasses(sql, scope, uuid, 'coupon', query, path)) satisfies Schemas['CouponPassPage'];
    },
  },
  {
    method: 'GET',
    path: '/members/{uuid}/storecards',
    handler: async (request) => {
      const [sql, scope, uuid, query, path] = pageArgs(request, 'storecard');
      return (await listMemberPasses(
        sql,
        scope,
        uuid,
        'storecard',
        query,
        path,
      )) satisfies Schemas['StorecardPassPage'];
    },
  },
];

export const memberPassRoutes: RouteDef[] = [
  ...passLists,
  {
    method: 'POST',
    path: '/members/{uuid}/passes',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const issued = await issuePassToMember(
          tx,
          scopeOf(request),
          request.params.uuid as string,
          payloadOf<Schemas['IssuePassRequest']>(request),
          appOf(request).baseUrl(),
        );
        return {
          status: issued.created ? 201 : 200,
          body: {
            success: true,
            pass_code: issued.passCode,
            wallet_url: issued.walletUrl,
            created: issued.created,
          } satisfies Schemas['IssuePassResponse'],
        };
      }),
  },
  {
    method: 'POST',
    path: '/members/location',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: {
          success: true,
          users: await setFavouriteLocation(
            tx,
            scopeOf(request),
            payloadOf<Schemas['FavoriteLocationRequest']>(request),
          ),
        } satisfies Schemas['FavoriteLocationResponse'],
      })),
  },
];
