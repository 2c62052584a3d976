// Issue one pass to one member.
import type { components } from '@loyalty/sdk';
import type { Context } from '../context.js';
import { call } from './api.js';
import { resolveMemberId } from './members.js';
import { voucherBody } from './vouchers.js';

type IssuePass = components['schemas']['IssuePassResponse'];

export async function issuePass(ctx: Context, member: string, options: { coupon?: string; storecard?: string; expires?: string }): Promise<void> {
  const brandId = ctx.brand();
  const body = voucherBody(brandId, options);
  const id = await resolveMemberId(ctx, brandId, member);
  const pass = await call<IssuePass>(ctx, 'POST', '/members/{uuid}/passes', { path: { uuid: id }, body });
  ctx.output.success(pass.created ? `Issued pass ${pass.pass_code} to ${member}.` : `${member} already has this storecard: pass ${pass.pass_code}.`);
  ctx.output.result({ member_id: id, ...pass }, () => `${pass.pass_code}  ${pass.wallet_url}`);
}
