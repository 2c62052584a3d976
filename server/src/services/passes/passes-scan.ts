import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { DomainError, notFound } from '../platform/errors.js';
import { recordEvents } from '../webhooks/events.js';
import { pushedAfter } from '../wallet/wallet-pushes.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

type PassRow = {
  id: string;
  organization_id: string;
  brand_id: string;
  kind: string;
  coupon_id: string | null;
  member_id: string;
  pass_code: string;
  status: string;
  redeemed_at: Date | null;
};

/**
 * A pass by its code, when it belongs to an organization of the token (and to `brandId` when
 * given); otherwise 404, exactly as an unknown code.
 */
export async function findPass(
  db: Db,
  scope: OrganizationScope,
  passCode: string,
  brandId?: string,
  { lock = false } = {},
): Promise<PassRow & { expired: boolean; points: number; balance: number; storecard_id: string | null }> {
  const [pass] = await db<
    (PassRow & { expired: boolean; points: number; balance: number; storecard_id: string | null })[]
  >`
    SELECT id, organization_id, brand_id, kind, coupon_id, storecard_id, member_id, pass_code, status, redeemed_at, points, balance,
           loyalty_pass_status(status, expiration_date, organization_id) = 'expired' AS expired
    FROM passes
    WHERE pass_code = ${passCode} AND organization_id = ANY(${scope.organizationIds})
      ${brandId !== undefined ? db`AND brand_id = ${brandId}` : db``}
    ${lock ? db`FOR UPDATE` : db``}`;
  if (!pass) throw notFound('Pass');
  return pass;
}

/**
 * POST /passes/scan: redeems a coupon pass exactly once. One conditional UPDATE does it, so two
 * tills scanning the same pass at once cannot both succeed; the loser learns why from a lookup.
 */
export async function redeemCouponPass(
  tx: Db,
  scope: OrganizationScope,
  input: Schemas['RedeemPassRequest'],
): Promise<Schemas['RedeemPassResponse']> {
  const [redeemed] = await tx<
    {
      id: string;
      coupon_id: string;
      member_id: string;
      brand_id: string;
      pass_code: string;
      organization_id: string;
      redeemed_at: Date;
    }[]
  >`
    WITH redeemed AS (
      UPDATE passes SET status = 'redeemed', redeemed_at = now(), updated_at = now()
      WHERE pass_code = ${input.pass_code} AND organization_id = ANY(${scope.organizationIds})
        ${input.brand_id !== undefined ? tx`AND brand_id = ${input.brand_id}` : tx``}
        AND kind = 'coupon' AND status <> 'redeemed'
        AND loyalty_pass_status(status, expiration_date, organization_id) = 'active'
      RETURNING id, coupon_id, member_id, brand_id, pass_code, organization_id, redeemed_at
    ), ${pushedAfter(tx, 'redeemed')}
    -- The wallet shows the pass voided now: its devices are told, with this change (none: no job).
    SELECT redeemed.* FROM redeemed CROSS JOIN pushed`;
  if (!redeemed) {
    const pass = await findPass(tx, scope, input.pass_code, input.brand_id);
    if (pass.kind !== 'coupon')
      throw new DomainError(
        'unprocessable',
        'not_a_coupon_pass',
        'This pass is not a coupon pass; use POST /passes/scan/storecard.',
      );
    if (pass.status === 'redeemed')
      throw new DomainError('conflict', 'pass_already_redeemed', 'This coupon pass has already been redeemed.');
    throw new DomainError('unprocessable', 'pass_expired', 'This coupon pass has expired.');
  }
  const redeemedAt = redeemed.redeemed_at.toISOString();
  await recordEvents(tx, [
    {
      organizationId: redeemed.organization_id,
      type: 'coupon.redeemed',
      data: {
        coupon_id: redeemed.coupon_id,
        pass_id: redeemed.id,
        member_id: redeemed.member_id,
        brand_id: redeemed.brand_id,
        redeemed_at: redeemedAt,
      },
    },
  ]);
  return {
    success: true,
    pass_code: redeemed.pass_code,
    coupon_id: redeemed.coupon_id,
    member_id: redeemed.member_id,
    status: 'redeemed',
    redeemed_at: redeemedAt,
  };
}
