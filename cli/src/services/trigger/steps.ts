// The API steps of the trigger recipes: typed SDK calls (its retries and Idempotency-Keys come with
// them), each reported on stderr as it completes. The data they create is marked as test data in
// the only ways the API allows: an e-mail at example.test, the name "Test Trigger", unsubscribed
// from marketing, and transaction references starting with "trigger-".
import { randomBytes } from 'node:crypto';
import type { Context } from '../../context.js';
import { CliError, ExitCode } from '../../errors.js';
import { type ApiResult, type DataOf, type Send, dataOf, request } from '../common/api.js';
import type { Steps } from './recipes.js';

/** The abilities (scopes) the steps need, as openapi.yaml names them. */
export type Ability = 'members.store' | 'passes.store' | 'webhooks.get';

/** A short random suffix that makes each run's test data unique. */
export const runId = (): string => randomBytes(6).toString('hex');

/** A 403 says which ability is missing; any other failure is explained as usual. */
export function lacksAbility(what: string, ability: Ability, cause?: unknown): CliError {
  return new CliError(`Permission denied: ${what} needs the ability ${ability}, which this token lacks.`, {
    exitCode: ExitCode.auth,
    hint: `Log in with a client that has ${ability} (\`loyalty login\`; the demo client acme-admin has every ability).`,
    cause,
  });
}

/** One call of a step: the body of its answer, or a CliError (naming the ability on a 403). */
export async function step<R extends ApiResult>(
  ctx: Context,
  what: string,
  ability: Ability,
  send: Send<R>,
): Promise<DataOf<R>> {
  const result = await request(ctx, send);
  if (result.response.status === 403) throw lacksAbility(what, ability, result.error);
  return dataOf(ctx, result);
}

export function apiSteps(ctx: Context, brandId: string, id: string = runId()): Steps {
  const done = (message: string) => ctx.output.success(message);
  return {
    async createMember() {
      const email = `trigger+${id}@example.test`;
      const body = { brand_id: brandId, email, first_name: 'Test', last_name: 'Trigger', unsubscribed: true };
      const member = await step(ctx, 'creating a member', 'members.store', (api, signal) =>
        api.POST('/members', { body, signal }),
      );
      done(`Created test member ${email} (${member.member_id}) in brand ${brandId}.`);
      return { member_id: member.member_id, email };
    },
    async issuePass(memberId, voucher) {
      const pass = await step(ctx, 'issuing a pass', 'passes.store', (api, signal) =>
        api.POST('/members/{uuid}/passes', {
          params: { path: { uuid: memberId } },
          body: { brand_id: brandId, ...voucher },
          signal,
        }),
      );
      const what = 'coupon_id' in voucher ? `coupon ${voucher.coupon_id}` : `storecard ${voucher.storecard_id}`;
      done(`Issued a pass of ${what} to the member: ${pass.pass_code}.`);
      return pass.pass_code;
    },
    async redeemCoupon(passCode) {
      const redeemed = await step(ctx, 'redeeming a coupon pass', 'passes.store', (api, signal) =>
        api.POST('/passes/scan', { body: { pass_code: passCode, brand_id: brandId }, signal }),
      );
      done(`Redeemed pass ${redeemed.pass_code} at ${redeemed.redeemed_at}.`);
    },
    async earnPoints(passCode) {
      const reference = `trigger-${id}`;
      const earned = await step(ctx, 'changing storecard points', 'passes.store', (api, signal) =>
        api.POST('/passes/scan/storecard', {
          body: { pass_code: passCode, brand_id: brandId, type: 'earn', points: 10, transaction_reference: reference },
          signal,
        }),
      );
      done(`Earned ${earned.transaction.points} points on pass ${passCode} (reference ${reference}).`);
      return reference;
    },
  };
}
