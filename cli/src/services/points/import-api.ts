// `points import`: the API calls it makes, through the SDK. A 404 or 422 about one row (unknown
// or expired pass, insufficient balance, unavailable storecard) rejects that row; anything else
// stops the import as any API failure does.
import { isLoyaltyError, iterateMembers, toLoyaltyError, type LoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { RowRefused, type PointsApi } from '../../import/points/api.js';
import { apiFailure, request, type ApiResult, type DataOf } from '../common/api.js';

function refusedOrFailure(ctx: Context, error: LoyaltyError): Error {
  if (error.status === 404 || error.status === 422) {
    const fields = error.fields ? Object.entries(error.fields).map(([f, m]) => `${f}: ${m.join(' ')}`) : [];
    return new RowRefused(`${error.code ?? error.status} ${fields.length ? fields.join('; ') : error.message}`);
  }
  return apiFailure(ctx, error);
}

/** The body of a successful answer; a refusal about the row rejects it, anything else stops the import. */
function answer<R extends ApiResult>(ctx: Context, result: R): DataOf<R> {
  const error = toLoyaltyError(result);
  if (error) throw refusedOrFailure(ctx, error);
  return result.data as DataOf<R>;
}

export function pointsApi(ctx: Context, brandId: string): PointsApi {
  return {
    async members(signal) {
      const members: Array<{ email: string; uuid: string }> = [];
      try {
        for await (const m of iterateMembers(ctx.client(), { brandId, perPage: 1000, signal }))
          members.push({ email: m.email, uuid: m.identifier });
      } catch (error) {
        if (isLoyaltyError(error) && !signal.aborted) throw apiFailure(ctx, error);
        throw error;
      }
      return members;
    },
    async passes(storecardId, signal) {
      const result = await request(
        ctx,
        (api, signal) => api.POST('/import/export', { body: { brand_id: brandId, storecard_id: storecardId }, signal }),
        { signal },
      );
      // A storecard unknown to the brand: no passes; each row is then refused when its pass is issued.
      if (result.response.status === 404) return new Map();
      const error = toLoyaltyError(result);
      if (error) throw apiFailure(ctx, error);
      return new Map(answer(ctx, result).data.map((row) => [row.email.toLowerCase(), row.qr_code]));
    },
    async balance(uuid, passCode, signal) {
      const result = await request(
        ctx,
        (api, signal) =>
          api.GET('/members/{uuid}/storecards', {
            params: { path: { uuid }, query: { brand_id: brandId, page: 1, per_page: 100 } },
            signal,
          }),
        { signal },
      );
      const pass = answer(ctx, result).data.find((p) => p.qr_code === passCode);
      if (!pass) throw new RowRefused(`the member's pass ${passCode} was not found`);
      return pass.balance;
    },
    async issuePass(uuid, storecardId, signal) {
      const result = await request(
        ctx,
        (api, signal) =>
          api.POST('/members/{uuid}/passes', {
            params: { path: { uuid } },
            body: { brand_id: brandId, storecard_id: storecardId },
            signal,
          }),
        { signal },
      );
      return answer(ctx, result).pass_code;
    },
    async scan(passCode, scan, signal) {
      const result = await request(
        ctx,
        (api, signal) =>
          api.POST('/passes/scan/storecard', { body: { pass_code: passCode, brand_id: brandId, ...scan }, signal }),
        { signal },
      );
      const data = answer(ctx, result);
      return { created: data.created, balance: data.pass.balance };
    },
  };
}
