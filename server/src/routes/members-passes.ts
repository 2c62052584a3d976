import type { Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import { listMemberPasses, setFavouriteLocation } from '../services/members-passes.js';
import { issuePassToMember, type IssuePassInput } from '../services/passes-issue.js';
import { payloadOf, queryOf, scopeOf } from './members.js';
import type { RouteDef } from './types.js';

const json = { payload: { allow: ['application/json'] } };

type PageQuery = { brand_id: string; page?: number; per_page?: number };

const passList = (kind: 'coupon' | 'storecard'): RouteDef => ({
  method: 'GET',
  path: `/members/{uuid}/${kind}s`,
  handler: (request: Request) => {
    const uuid = request.params.uuid as string;
    const path = `${appOf(request).baseUrl()}/members/${encodeURIComponent(uuid)}/${kind}s`;
    return listMemberPasses(appOf(request).sql, scopeOf(request), uuid, kind, queryOf<PageQuery>(request), path);
  },
});

export const memberPassRoutes: RouteDef[] = [
  passList('coupon'),
  passList('storecard'),
  {
    method: 'POST',
    path: '/members/{uuid}/passes',
    options: json,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const issued = await issuePassToMember(tx, scopeOf(request), request.params.uuid as string, payloadOf<IssuePassInput>(request), appOf(request).baseUrl());
        return {
          status: issued.created ? 201 : 200,
          body: { success: true, pass_code: issued.passCode, wallet_url: issued.walletUrl, created: issued.created },
        };
      }),
  },
  {
    method: 'POST',
    path: '/members/location',
    options: json,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: { success: true, users: await setFavouriteLocation(tx, scopeOf(request), payloadOf<{ location_id: string; users: string[] }>(request)) },
      })),
  },
];
