// Whether the API knows a brand. The API has no brand endpoint, and GET /tags lists the tags of
// every brand the token reaches without naming the brand sent; a one-member page of the brand's
// member list answers 404 for a brand it does not know, as every brand-scoped call does.
import { type LoyaltyClient, toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { unknownBrand } from '../../explain.js';
import { apiFailure, request } from './api.js';

/** true: known; false: unknown (404); undefined: the token may not list members (403), so cannot tell. */
export async function brandKnown(ctx: Context, brandId: string, client?: LoyaltyClient): Promise<boolean | undefined> {
  const result = await request(
    ctx,
    (api, signal) => api.POST('/members/list', { body: { brand_id: brandId, page: 1, per_page: 1 }, signal }),
    client ? { client } : {},
  );
  const error = toLoyaltyError(result);
  if (!error) return true;
  if (error.status === 403) return undefined;
  if (error.status === 404) return false;
  throw apiFailure(ctx, error);
}

/** Throws the CLI's one "Brand … not found" error when the API does not know the configured brand. */
export async function assertBrandKnown(ctx: Context): Promise<void> {
  const brand = ctx.config.settings.brand;
  if (!brand || (await brandKnown(ctx, brand.value)) !== false) return;
  const explained = unknownBrand(brand);
  throw new CliError(explained.message, { exitCode: explained.exitCode, hint: explained.hint });
}
