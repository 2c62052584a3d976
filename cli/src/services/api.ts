// The one way services call the API: through the SDK client, with failures turned into
// CliErrors that say what went wrong and what to do next.
import { isLoyaltyError, toLoyaltyError, type LoyaltyClient, type LoyaltyError } from '@loyalty/sdk';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { explainApiError } from '../explain.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface CallInit {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean | string[] | undefined>;
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** A client other than the context's default one. */
  client?: LoyaltyClient;
}

type LooseRequest = (
  method: Method,
  url: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export function apiFailure(ctx: Pick<Context, 'apiUrl' | 'config'>, error: LoyaltyError): CliError {
  const explained = explainApiError(error, { apiUrl: ctx.apiUrl, profile: ctx.config.profile.name });
  return new CliError(explained.message, { exitCode: explained.exitCode, hint: explained.hint, cause: error });
}

/** The raw result, for callers that handle some error statuses themselves. */
export async function request(ctx: Context, method: Method, url: string, init: CallInit = {}) {
  const client = init.client ?? ctx.client();
  const send = (client.request as unknown as LooseRequest).bind(client);
  try {
    return await send(method, url, {
      params: { ...(init.path ? { path: init.path } : {}), ...(init.query ? { query: init.query } : {}) },
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.idempotencyKey ? { headers: { 'Idempotency-Key': init.idempotencyKey } } : {}),
      signal: init.signal ?? ctx.signal,
    });
  } catch (error) {
    if (isLoyaltyError(error) && !ctx.signal.aborted) throw apiFailure(ctx, error);
    throw error;
  }
}

/** The body of a successful result; an error response becomes a CliError. */
export function dataOf<T>(ctx: Context, result: { data?: unknown; error?: unknown; response: Response }): T {
  const error = toLoyaltyError(result);
  if (error) throw apiFailure(ctx, error);
  return result.data as T;
}

/** Calls the API and returns the response body; any error response becomes a CliError. */
export async function call<T>(ctx: Context, method: Method, url: string, init: CallInit = {}): Promise<T> {
  return dataOf<T>(ctx, await request(ctx, method, url, init));
}
