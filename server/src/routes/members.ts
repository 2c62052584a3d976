import type { Readable } from 'node:stream';
import type { Request, ResponseToolkit } from '@hapi/hapi';
import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { bulkUpdateMembers } from '../services/members/members-bulk.js';
import {
  exportMembersWithPoints,
  listMembersPage,
  readListPage,
  streamAllMembers,
} from '../services/members/members-list.js';
import { findMemberUuids, searchMember } from '../services/members/members-lookup.js';
import { requireBrand } from '../services/platform/members-scope.js';
import { importSignups } from '../services/members/members-signups.js';
import { createMember, deleteMemberFromBrand, getMember, updateMember } from '../services/members/members.js';
import { JSON_TYPE, ok, payloadOf, queryFromBody, queryOf, scopeOf } from './route-options.js';
import type { RouteDef } from './types.js';

/**
 * Whole lists run to tens of megabytes: the fastest gzip level costs a third of the default's time.
 * A sign-up import's answer (an e-mail and a UUID per member, 150 kB for 2000) too: at the default
 * level its compression was ~6 ms of a 2000-member import's server CPU (profile, issue 17).
 */
const listOptions = { compression: { gzip: { level: 1 }, deflate: { level: 1 } } };

const baseUrlOf = (request: Request) => appOf(request).baseUrl();

/**
 * A streamed response within the client's share (config.streamsPerToken, counted per client: all
 * its tokens together, so minting tokens gives none; 429 beyond it, nothing run). The slot is given
 * back, and the stream stopped, when the connection closes for any reason.
 */
async function streamWithinShare(request: Request, h: ResponseToolkit, open: () => Promise<Readable>) {
  const release = appOf(request).streamSlots.acquire(principalOf(request).clientId);
  if (!release) {
    const message = 'Too many streamed lists at once for this client: wait for one to finish, or ask for pages.';
    return h
      .response({ message } satisfies Schemas['RateLimitError'])
      .code(429)
      .header('retry-after', '1');
  }
  let stream: Readable;
  try {
    stream = await open();
  } catch (error) {
    release();
    throw error;
  }
  // Whichever comes first: the list read to its end, or the connection gone (then stop reading the database).
  stream.once('close', release);
  request.raw.res.once('close', () => {
    release();
    if (!stream.readableEnded) stream.destroy();
  });
  return h.response(stream).type(JSON_TYPE);
}

export const memberRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/members/list',
    options: listOptions,
    handler: async (request, h) => {
      const body = payloadOf<Schemas['ListMembersRequest']>(request);
      const page = readListPage(body);
      const { sql, streamSql } = appOf(request);
      const brand = await requireBrand(sql, scopeOf(request), body.brand_id);
      const listUrl = `${baseUrlOf(request)}/members/list`;
      if (page) return h.response(await listMembersPage(sql, brand, page, listUrl)).type(JSON_TYPE);
      // Without page and per_page the whole list streams in chunks (100,000 members included).
      return streamWithinShare(request, h, () => streamAllMembers(streamSql, brand, listUrl));
    },
  },
  {
    method: 'POST',
    path: '/import/export',
    options: listOptions,
    handler: async (request, h) => {
      const body = payloadOf<Schemas['ListMembersWithPointsRequest']>(request);
      const { sql, streamSql } = appOf(request);
      const brand = await requireBrand(sql, scopeOf(request), body.brand_id);
      return streamWithinShare(request, h, () => exportMembersWithPoints(streamSql, brand, body.storecard_id));
    },
  },
  {
    method: 'GET',
    path: '/members',
    handler: async (request) =>
      (await searchMember(
        appOf(request).sql,
        scopeOf(request),
        queryOf<QueryOf<'/members', 'get'>>(request),
      )) satisfies Schemas['MemberSearchResponse'],
  },
  {
    method: 'POST',
    path: '/members',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        const { created, memberId } = await createMember(
          tx,
          scopeOf(request),
          payloadOf<Schemas['CreateMemberRequest']>(request),
        );
        return {
          status: created ? 201 : 200,
          body: {
            success: true,
            created,
            member_id: memberId,
            identifier: memberId,
          } satisfies Schemas['MemberCreated'],
        };
      }),
  },
  {
    method: 'GET',
    path: '/members/{uuid}',
    handler: async (request) =>
      (await getMember(
        appOf(request).sql,
        scopeOf(request),
        request.params.uuid as string,
        queryOf<QueryOf<'/members/{uuid}', 'get'>>(request).brand_id,
        baseUrlOf(request),
      )) satisfies Schemas['MemberResponse'],
  },
  {
    method: 'PUT',
    path: '/members/{uuid}',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: (await updateMember(
          tx,
          scopeOf(request),
          request.params.uuid as string,
          payloadOf<Schemas['UpdateMemberRequest']>(request),
          baseUrlOf(request),
        )) satisfies Schemas['MemberResponse'],
      })),
  },
  {
    method: 'DELETE',
    path: '/members/{uuid}',
    options: queryFromBody,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => {
        await deleteMemberFromBrand(
          tx,
          scopeOf(request),
          request.params.uuid as string,
          queryOf<QueryOf<'/members/{uuid}', 'delete'>>(request).brand_id,
        );
        return { body: { success: true, message: 'Member deleted' } satisfies Schemas['SuccessMessage'] };
      }),
  },
  {
    method: 'PUT',
    path: '/bulk/members',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: ok(
          await bulkUpdateMembers(tx, scopeOf(request), payloadOf<Schemas['BulkUpdateMembersRequest']>(request)),
        ) satisfies Schemas['MembersUpdated'],
      })),
  },
  {
    method: 'POST',
    path: '/members/uuid',
    handler: async (request) =>
      ok(
        await findMemberUuids(
          appOf(request).sql,
          scopeOf(request),
          payloadOf<Schemas['FindMemberUuidsRequest']>(request),
        ),
      ) satisfies Schemas['MemberUuidsByEmail'],
  },
  {
    method: 'POST',
    path: '/members/signups',
    options: listOptions,
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        body: ok(
          await importSignups(tx, scopeOf(request), payloadOf<Schemas['ImportSignupsRequest']>(request)),
        ) satisfies Schemas['SignupsImported'],
      })),
  },
];
