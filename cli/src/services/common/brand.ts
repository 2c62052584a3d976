// Whether the API knows a brand. The API has no brand endpoint, and GET /tags lists the tags of
// every brand the token reaches without naming the brand sent; a one-member page of the brand's
// member list answers 404 for a brand it does not know, as every brand-scoped call does.
import { toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { unknownBrand } from '../../explain.js';
import { apiFailure, request } from './api.js';

/**
 * Throws the CLI's one "Brand … not found" error when the API does not know the configured brand.
 * A token that may not list members (403) cannot tell: then nothing is thrown.
 */
export async function assertBrandKnown(ctx: Context): Promise<void> {
  const brand = ctx.config.settings.brand;
  if (!brand) return;
  const result = await request(ctx, (api, signal) =>
    api.POST('/members/list', { body: { brand_id: brand.value, page: 1, per_page: 1 }, signal }),
  );
  const error = toLoyaltyError(result);
  if (!error || error.status === 403) return;
  if (error.status === 404) {
    const explained = unknownBrand(brand, error);
    throw new CliError(explained.message, { exitCode: explained.exitCode, hint: explained.hint, cause: error });
  }
  throw apiFailure(ctx, error);
}
