// `members import --update`: the two API calls the update path needs. The brand's members come
// from the member list, 1,000 per request (its largest page): ceil(members / 1000) requests, however
// long the file, against one GET /members/{uuid} per row that would tell first names apart.
import { isLoyaltyError, iterateMembers } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { brandMemberOf, type BrandMember, type SendMemberUpdates } from '../../import/update.js';
import { apiFailure, call } from '../common/api.js';

/** Every member of the brand, by lower-case e-mail. */
export async function brandMembers(
  ctx: Context,
  brandId: string,
  signal: AbortSignal,
): Promise<Map<string, BrandMember>> {
  const members = new Map<string, BrandMember>();
  try {
    for await (const item of iterateMembers(ctx.client(), { brandId, perPage: 1000, signal }))
      members.set(...brandMemberOf(item));
  } catch (error) {
    if (isLoyaltyError(error) && !signal.aborted) throw apiFailure(ctx, error);
    throw error;
  }
  return members;
}

/** PUT /bulk/members for one batch (the SDK adds the Idempotency-Key its retries reuse). */
export function memberUpdateSender(ctx: Context, brandId: string): SendMemberUpdates {
  return async (members, { signal }) => {
    const { data } = await call(
      ctx,
      (api, signal) => api.PUT('/bulk/members', { body: { brand_id: brandId, members }, signal }),
      { signal },
    );
    return { updated: data.updated, notFound: data.not_found };
  };
}
