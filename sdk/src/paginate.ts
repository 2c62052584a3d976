/**
 * Async iteration over the API's lists, one request per page, items yielded in order (the whole
 * member list in one streamed response: `streamMembers`, member-stream.ts).
 * A page that fails (after the client's retries) throws its `LoyaltyError`; a `signal` stops
 * the iteration (the pending request is aborted).
 */
import type { ClientOfPaths } from './client.js';
import { LoyaltyError, toLoyaltyError } from './errors.js';
import { requestIdOf } from './request-id.js';
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];
export type MemberListItem = Schemas['MemberListItem'];
export type CouponPass = Schemas['CouponPass'];
export type StorecardPass = Schemas['StorecardPass'];
export type LoyaltyEvent = Schemas['Event'];

function orThrow<D>(result: { data?: D; error?: unknown; response: Response }): D {
  const err = toLoyaltyError(result);
  if (err) throw err;
  if (result.data === undefined)
    throw new LoyaltyError({
      status: result.response.status,
      code: 'invalid_response',
      message: 'Empty response body',
      requestId: requestIdOf(result.response),
    });
  return result.data;
}

export interface MembersOptions {
  brandId: string;
  /** 1 to 1000. Default 500. */
  perPage?: number;
  /** Page to start at. Default 1. */
  page?: number;
  signal?: AbortSignal;
}

/**
 * Every member of a brand (`POST /members/list`), page by page until `last_page`. Pages are the
 * API document's way for large brands: it says the unpaged list "takes a long time" above 3000
 * members. `streamMembers` reads that one unpaged response as it arrives, the fastest path where
 * the server streams it (the reference server does: a million members in seconds).
 */
export async function* iterateMembers(
  client: ClientOfPaths,
  options: MembersOptions,
): AsyncGenerator<MemberListItem, void, undefined> {
  const perPage = options.perPage ?? 500;
  for (let page = options.page ?? 1; ; page++) {
    const { data } = orThrow(
      await client.POST('/members/list', {
        body: { brand_id: options.brandId, page, per_page: perPage },
        signal: options.signal,
      }),
    );
    yield* data.members;
    if (page >= data.last_page || data.members.length === 0) return;
  }
}

export interface MemberPassesOptions {
  /** The member's UUID. */
  memberId: string;
  brandId: string;
  /** 1 to 100. Default 100. */
  perPage?: number;
  signal?: AbortSignal;
}

/** What both pass lists take: the member, the brand and the page. */
type MemberPassesInit = {
  params: { path: { uuid: string }; query: { brand_id: string; page: number; per_page: number } };
  signal: AbortSignal | undefined;
};

/** The pages of a member's passes (a Laravel paginator), one `GET` through `get` each. */
async function* memberPasses<Pass>(
  options: MemberPassesOptions,
  get: (init: MemberPassesInit) => Promise<{
    data?: { data?: Pass[]; current_page: number; last_page: number };
    error?: unknown;
    response: Response;
  }>,
): AsyncGenerator<Pass, void, undefined> {
  for (let page = 1; ; page++) {
    const data = orThrow(
      await get({
        params: {
          path: { uuid: options.memberId },
          query: { brand_id: options.brandId, page, per_page: options.perPage ?? 100 },
        },
        signal: options.signal,
      }),
    );
    yield* data.data ?? [];
    if (data.current_page >= data.last_page || !data.data?.length) return;
  }
}

/** Every coupon pass of a member in a brand (`GET /members/{uuid}/coupons`, Laravel paginator). */
export function iterateMemberCoupons(
  client: ClientOfPaths,
  options: MemberPassesOptions,
): AsyncGenerator<CouponPass, void, undefined> {
  return memberPasses(options, (init) => client.GET('/members/{uuid}/coupons', init));
}

/** Every storecard pass of a member in a brand (`GET /members/{uuid}/storecards`, Laravel paginator). */
export function iterateMemberStorecards(
  client: ClientOfPaths,
  options: MemberPassesOptions,
): AsyncGenerator<StorecardPass, void, undefined> {
  return memberPasses(options, (init) => client.GET('/members/{uuid}/storecards', init));
}

export interface EventsOptions {
  /** Resume after this cursor (a saved `feed.cursor`). Without it the feed starts with the latest `limit` events. */
  after?: string;
  /** Only these event types. */
  types?: readonly LoyaltyEvent['type'][];
  /** Events per request, 1 to 100. Default 100. */
  limit?: number;
  /** Keep waiting for new events (long poll) instead of ending when caught up. */
  follow?: boolean;
  /** Long-poll seconds per request in follow mode, 1 to 30. Default 20 (keep it below the client's timeoutMs). */
  wait?: number;
  organizationId?: string;
  signal?: AbortSignal;
}

export interface EventFeed extends AsyncIterable<LoyaltyEvent> {
  /**
   * Where to resume without missing an event: the cursor before the page being read, moved on
   * once all of its events have been taken. Save it after handling events; at most one page
   * is seen again after a restart (de-duplicate on `event.id`).
   */
  readonly cursor: string | undefined;
}

/** The organization's events (`GET /events`), oldest first; with `follow`, waits for new ones until aborted. */
export function iterateEvents(client: ClientOfPaths, options: EventsOptions = {}): EventFeed {
  let cursor = options.after;
  const limit = options.limit ?? 100;
  async function* events(): AsyncGenerator<LoyaltyEvent, void, undefined> {
    let caughtUp = false;
    for (;;) {
      const wait: number | undefined = caughtUp && options.follow ? (options.wait ?? 20) : undefined;
      const page: Schemas['EventListResponse'] = orThrow(
        await client.GET('/events', {
          params: {
            query: {
              after: cursor,
              limit,
              wait,
              types: options.types?.join(','),
              organization_id: options.organizationId,
            },
          },
          signal: options.signal,
        }),
      );
      yield* page.data;
      cursor = page.next_cursor;
      caughtUp = page.data.length < limit;
      if (caughtUp && !options.follow) return;
    }
  }
  return {
    get cursor() {
      return cursor;
    },
    [Symbol.asyncIterator]: events,
  };
}
