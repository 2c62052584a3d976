/**
 * `createLoyaltyClient`: the typed openapi-fetch client over the generated `paths`, with every
 * call sent through the SDK transport (idempotency keys, retries, pacing, tokens), plugged in as
 * openapi-fetch's `fetch` option: it receives each call's Request after any middleware.
 */
import createClient, {
  type Client,
  createQuerySerializer,
  type FetchResponse,
  type MaybeOptionalInit,
} from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { ClientCredentials } from './auth.js';
import type { paths } from './generated/openapi.js';
import type { ClientHooks, Logger, LogLevel } from './internal/hooks.js';
import type { CallOptions } from './retry.js';
import type { PacingOptions } from './rate-limit.js';
import { pathSerializer } from './internal/path-serializer.js';
import { createTransport, type FetchLike } from './internal/transport.js';
import type { RetryOptions } from './retry.js';

/**
 * A call's options: openapi-fetch's (`params`, `body`, `signal`, …; other keys pass, as there) and
 * the SDK's, typed (`retry`, `timeoutMs`, `hooks`).
 */
type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & CallOptions & { [key: string]: unknown })?]
    : [Init & CallOptions & { [key: string]: unknown }];
type CallMethod<M extends HttpMethod> = <
  P extends PathsWithMethod<paths, M>,
  Init extends MaybeOptionalInit<paths[P], M>,
>(
  url: P,
  ...init: InitParam<Init>
) => Promise<paths[P][M] extends infer O extends Record<string, unknown> ? FetchResponse<O, Init, MediaType> : never>;

/**
 * What the SDK's helpers (`iterateMembers`, `runChunked`, …) take: a LoyaltyClient, or a client
 * made with openapi-fetch's own `createClient<paths>` (which a LoyaltyClient is, with more types).
 */
export type ClientOfPaths = Client<paths>;

/** openapi-fetch's client over the API's `paths`, its methods taking the SDK's per-call options too. */
export type LoyaltyClient = Omit<Client<paths>, Uppercase<HttpMethod>> & {
  [M in HttpMethod as Uppercase<M>]: CallMethod<M>;
};

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
  /** Called for each request of every call (hooks.ts); a call's own `hooks` are called after these. */
  hooks?: ClientHooks;
  /** Where to log requests, retries and failures (`console` fits); nothing is logged without one. */
  logger?: Logger;
  /** How much to log. Default `warn` (hooks that threw; `error`: calls that failed). */
  logLevel?: LogLevel;
}

export type LoyaltyClientOptions = CommonOptions &
  (
    | { /** A bearer token. */ token: string; clientCredentials?: never }
    | { /** Fetch and refresh tokens from `POST /oauth/token`. */ clientCredentials: ClientCredentials; token?: never }
  );

export function createLoyaltyClient(options: LoyaltyClientOptions): LoyaltyClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // openapi-fetch passes the fetch options it does not know (`retry`, `timeoutMs`, `hooks`) on to
  // the Request that the transport reads; LoyaltyClient only types them. (Its response type, the
  // same, is written with a conditional the compiler cannot match to openapi-fetch's by itself.)
  const client: Client<paths> = createClient<paths>({
    baseUrl,
    fetch: createTransport({ ...options, baseUrl }),
    headers: { accept: 'application/json' },
    // A function, made once: given options, openapi-fetch would make a serializer per call.
    querySerializer: createQuerySerializer(),
    pathSerializer, // `.` and `..` values are sent encoded (internal/path-serializer.ts)
  });
  return client as LoyaltyClient;
}
