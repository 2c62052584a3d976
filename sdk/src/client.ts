/**
 * `createLoyaltyClient`: the typed openapi-fetch client over the generated `paths`, with every
 * call sent through the SDK transport (idempotency keys, retries, pacing, tokens), plugged in as
 * openapi-fetch's `fetch` option: it receives each call's Request after any middleware.
 */
import createClient, { type Client, createQuerySerializer } from 'openapi-fetch';
import type { ClientCredentials } from './auth.js';
import type { paths } from './generated/openapi.js';
import type { PacingOptions } from './rate-limit.js';
import { pathSerializer } from './internal/path-serializer.js';
import { createTransport, type FetchLike } from './internal/transport.js';
import type { RetryOptions } from './retry.js';

export type LoyaltyClient = Client<paths>;

interface CommonOptions {
  /** For example `https://api.example.com` or `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Transport for every attempt (default: the global `fetch`, looked up per call). */
  fetch?: FetchLike;
  /** Retry policy, or `false` for a single attempt. */
  retry?: RetryOptions | false;
  /** Per-attempt time to wait for response headers. Default 30 000; 0 for none. */
  timeoutMs?: number;
  /** Sent as `User-Agent`. */
  userAgent?: string;
  /**
   * Pace calls with one limiter per base URL and token, shared by every client in the process.
   * Default true. `windowMs` must match the server's window when it is not one minute.
   */
  pacing?: boolean | PacingOptions;
}

export type LoyaltyClientOptions = CommonOptions &
  (
    | { /** A bearer token. */ token: string; clientCredentials?: never }
    | { /** Fetch and refresh tokens from `POST /oauth/token`. */ clientCredentials: ClientCredentials; token?: never }
  );

export function createLoyaltyClient(options: LoyaltyClientOptions): LoyaltyClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  return createClient<paths>({
    baseUrl,
    fetch: createTransport({ ...options, baseUrl }),
    headers: { accept: 'application/json' },
    // A function, made once: given options, openapi-fetch would make a serializer per call.
    querySerializer: createQuerySerializer(),
    pathSerializer, // `.` and `..` values are sent encoded (internal/path-serializer.ts)
  });
}
