// Issue one pass to one member.
import type { Context } from '../../context.js';
import { call } from '../common/api.js';
import { resolveMemberId } from '../members/members.js';
import { voucherBody } from '../vouchers/vouchers.js';

export async function issuePass(
  ctx: Context,
  member: string,
  options: { coupon?: string; storecard?: string; expires?: string },
): Promise<void> {
  const brandId = ctx.brand();
  const body = voucherBody(brandId, options);
  const id = await resolveMemberId(ctx, brandId, member);
  const pass = await call(ctx, (api, signal) =>
    api.POST('/members/{uuid}/passes', { params: { path: { uuid: id } }, body, signal }),
  );
  ctx.output.success(
    pass.created
      ? `Issued pass ${pass.pass_code} to ${member}.`
      : `${member} already has this storecard: pass ${pass.pass_code}.`,
  );
  ctx.output.result({ member_id: id, ...pass }, () => `${pass.pass_code}  ${pass.wallet_url}`);
}
