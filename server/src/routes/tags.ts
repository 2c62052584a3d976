import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import * as tags from '../services/tags/tags.js';
import { bodyFromQuery, JSON_TYPE, payloadOf, queryOf, scopeOf } from './route-options.js';
import type { RouteDef } from './types.js';

const message = (text: string): Schemas['SuccessMessage'] => ({ success: true, message: text });

export const tagRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/tags',
    handler: async (request, h) => {
      const data = await tags.listTagsJson(appOf(request).sql, scopeOf(request));
      const body: tags.JsonText<Schemas['TagListResponse']> = `{"success":true,"data":${data}}`;
      return h.response(body).type(JSON_TYPE);
    },
  },
  {
    method: 'POST',
    path: '/tags',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const tag = await tags.createTag(tx, scopeOf(request), payloadOf<Schemas['CreateTagRequest']>(request));
        return { status: 201, body: { success: true, data: tag } satisfies Schemas['TagResponse'] };
      }),
  },
  {
    method: 'PUT',
    path: '/tags',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const tag = await tags.updateTag(tx, scopeOf(request), payloadOf<Schemas['UpdateTagRequest']>(request));
        return { body: { success: true, data: tag } satisfies Schemas['TagResponse'] };
      }),
  },
  {
    method: 'DELETE',
    path: '/tags',
    options: bodyFromQuery,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.deleteTag(tx, scopeOf(request), payloadOf<Schemas['DeleteTagRequest']>(request));
        return { body: message('Tag removed') };
      }),
  },
  {
    method: 'GET',
    path: '/tags/passes',
    handler: async (request): Promise<Schemas['TagPassListResponse']> => ({
      success: true,
      data: await tags.listTagPasses(
        appOf(request).sql,
        scopeOf(request),
        queryOf<QueryOf<'/tags/passes', 'get'>>(request),
      ),
    }),
  },
  {
    method: 'POST',
    path: '/tags/passes',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.addPassToTag(tx, scopeOf(request), payloadOf<Schemas['TagPassRequest']>(request));
        return { body: message('Pass added to tag') };
      }),
  },
  {
    method: 'DELETE',
    path: '/tags/passes',
    options: bodyFromQuery,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.removePassFromTag(tx, scopeOf(request), payloadOf<Schemas['TagPassRequest']>(request));
        return { body: message('Pass removed from tag') };
      }),
  },
  {
    method: 'GET',
    path: '/tags/members',
    handler: async (request): Promise<Schemas['TagMemberListResponse']> => ({
      success: true,
      data: await tags.listTagMembers(
        appOf(request).sql,
        scopeOf(request),
        queryOf<QueryOf<'/tags/members', 'get'>>(request),
      ),
    }),
  },
  {
    method: 'POST',
    path: '/tags/members',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.addMemberToTag(tx, scopeOf(request), payloadOf<Schemas['TagMemberRequest']>(request));
        return { body: message('Member added to tag') };
      }),
  },
  {
    method: 'DELETE',
    path: '/tags/members',
    options: bodyFromQuery,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await tags.removeMemberFromTag(tx, scopeOf(request), payloadOf<Schemas['TagMemberRequest']>(request));
        return { body: message('Member removed from tag') };
      }),
  },
  {
    method: 'POST',
    path: '/tags/members/bulk',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const added = await tags.addMembersToTagBulk(
          tx,
          scopeOf(request),
          payloadOf<Schemas['TagMembersBulkRequest']>(request),
        );
        return { body: message(`Added ${added} members to tag`) };
      }),
  },
];
