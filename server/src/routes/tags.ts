import type { Lifecycle, Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import type { Schemas } from '../lib/schemas.js';
import { principalOf } from '../plugins/auth.js';
import * as tags from '../services/tags.js';
import type { RouteDef } from './types.js';
import type { OrganizationScope } from '../services/organization-scope.js';

type Body<T> = T & Record<string, unknown>;

const message = (text: string): Schemas['SuccessMessage'] => ({ success: true, message: text });

/**
 * The spec sends DELETE parameters in a JSON body; openapi.yaml promises the query string works
 * too. Before validation, query values fill in whatever the body does not give.
 */
const bodyOrQuery = {
  ext: {
    onPostAuth: {
      method: ((request: Request, h) => {
        const target = request as { payload: unknown };
        const body = request.payload;
        if (body === null || body === undefined) target.payload = { ...request.query };
        else if (typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body)) target.payload = { ...request.query, ...body };
        return h.continue;
      }) satisfies Lifecycle.Method,
    },
  },
};

const tenancy = (request: Request): OrganizationScope => principalOf(request);
const payloadOf = <T>(request: Request) => request.payload as Body<T>;
const queryOf = <T>(request: Request) => request.query as Body<T>;

export const tagRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/tags',
    handler: async (request, h) => {
      const data = await tags.listTagsJson(appOf(request).sql, tenancy(request));
      const body: tags.JsonText<Schemas['TagListResponse']> = `{"success":true,"data":${data}}`;
      return h.response(body).type('application/json; charset=utf-8');
    },
  },
  {
    method: 'POST',
    path: '/tags',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const tag = await tags.createTag(tx, tenancy(request), payloadOf<Schemas['CreateTagRequest']>(request));
        return { status: 201, body: { success: true, data: tag } satisfies Schemas['TagResponse'] };
      }),
  },
  {
    method: 'PUT',
    path: '/tags',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const tag = await tags.updateTag(tx, tenancy(request), payloadOf<Schemas['UpdateTagRequest']>(request));
        return { body: { success: true, data: tag } satisfies Schemas['TagResponse'] };
      }),
  },
  {
    method: 'DELETE',
    path: '/tags',
    options: bodyOrQuery,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.deleteTag(tx, tenancy(request), payloadOf<Schemas['DeleteTagRequest']>(request));
        return { body: message('Tag removed') };
      }),
  },
  {
    method: 'GET',
    path: '/tags/passes',
    handler: async (request): Promise<Schemas['TagPassListResponse']> => ({
      success: true,
      data: await tags.listTagPasses(appOf(request).sql, tenancy(request), queryOf<{ tag_id: string; brand_id: string }>(request)),
    }),
  },
  {
    method: 'POST',
    path: '/tags/passes',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.addPassToTag(tx, tenancy(request), payloadOf<Schemas['TagPassRequest']>(request));
        return { body: message('Pass added to tag') };
      }),
  },
  {
    method: 'DELETE',
    path: '/tags/passes',
    options: bodyOrQuery,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.removePassFromTag(tx, tenancy(request), payloadOf<Schemas['TagPassRequest']>(request));
        return { body: message('Pass removed from tag') };
      }),
  },
  {
    method: 'GET',
    path: '/tags/members',
    handler: async (request): Promise<Schemas['TagMemberListResponse']> => ({
      success: true,
      data: await tags.listTagMembers(appOf(request).sql, tenancy(request), queryOf<{ tag_id: string; brand_id: string }>(request)),
    }),
  },
  {
    method: 'POST',
    path: '/tags/members',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.addMemberToTag(tx, tenancy(request), payloadOf<Schemas['TagMemberRequest']>(request));
        return { body: message('Member added to tag') };
      }),
  },
  {
    method: 'DELETE',
    path: '/tags/members',
    options: bodyOrQuery,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.removeMemberFromTag(tx, tenancy(request), payloadOf<Schemas['TagMemberRequest']>(request));
        return { body: message('Member removed from tag') };
      }),
  },
  {
    method: 'POST',
    path: '/tags/members/bulk',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const added = await tags.addMembersToTagBulk(tx, tenancy(request), payloadOf<Schemas['TagMembersBulkRequest']>(request));
        return { body: message(`Added ${added} members to tag`) };
      }),
  },
];
