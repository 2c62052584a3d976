// The one way services call the API: the SDK client's typed methods (`api.GET('/tags', …)`),
// so a path the document does not have is a compile error and every answer has the document's
// type; failures become CliErrors that say what went wrong and what to do next.
import { isLoyaltyError, toLoyaltyError, type LoyaltyClient, type LoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { explainApiError } from '../../explain.js';

/** What openapi-fetch resolves a call with: `{ data }` on success, `{ error }` otherwise. */
export interface ApiResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The body of a successful result (the `data` member of openapi-fetch's success branch). */
export type DataOf<R> = R extends { data: infer D } ? D : never;

/**
 * One typed call: `(api, signal) => api.POST('/tags', { body, signal })`. `signal` is the
 * command's Ctrl-C signal unless the call has its own (`options.signal`).
 */
export type Send<R extends ApiResult> = (api: LoyaltyClient, signal: AbortSignal) => Promise<R>;

export interface SendOptions {
  /** A client other than the context's default one (e.g. one without retries). */
  client?: LoyaltyClient;
  signal?: AbortSignal;
}

/**
 * `sentBrand: false` for requests whose brand is not the configured one (`loyalty api`), so an
 * unknown brand is not named after the wrong setting.
 */
export function apiFailure(
  ctx: Pick<Context, 'apiUrl' | 'config'>,
  error: LoyaltyError,
  { sentBrand = true }: { sentBrand?: boolean } = {},
): CliError {
  const brand = sentBrand ? ctx.config.settings.brand : undefined;
  const explained = explainApiError(error, {
    apiUrl: ctx.apiUrl,
    profile: ctx.config.profile.name,
    ...(brand ? { brand } : {}),
  });
  return new CliError(explained.message, { exitCode: explained.exitCode, hint: explained.hint, cause: error });
}

/** The raw result, for callers that handle some error statuses themselves. */
export async function request<R extends ApiResult>(ctx: Context, send: Send<R>, options: SendOptions = {}): Promise<R> {
  const api = options.client ?? ctx.client();
  try {
    return await send(api, options.signal ?? ctx.signal);
  } catch (error) {
    // No response at all (connection refused, timeout after the retries).
    if (isLoyaltyError(error) && !ctx.signal.aborted) throw apiFailure(ctx, error);
    throw error;
  }
}

/** The body of a successful result; an error response becomes a CliError. */
export function dataOf<R extends ApiResult>(ctx: Context, result: R): DataOf<R> {
  const error = toLoyaltyError(result);
  if (error) throw apiFailure(ctx, error);
  return result.data as DataOf<R>;
}

/** Calls the API and returns the response body; any error response becomes a CliError. */
export async function call<R extends ApiResult>(
  ctx: Context,
  send: Send<R>,
  options: SendOptions = {},
): Promise<DataOf<R>> {
  return dataOf(ctx, await request(ctx, send, options));
}

/** The `Idempotency-Key` header parameter of the operations that document it. */
export const idempotencyHeader = (key: string | undefined): { 'Idempotency-Key'?: string } =>
  key ? { 'Idempotency-Key': key } : {};
