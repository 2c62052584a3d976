/**
 * `createLoyaltyClient`: the typed openapi-fetch client over the generated `paths`, with every
 * call sent through the SDK transport (idempotency keys, retries, pacing, tokens).
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { ClientCredentials } from './auth.js';
import type { paths } from './generated/openapi.js';
import type { PacingOptions } from './rate-limit.js';
import { callRequest, ReplayableRequest, trustedBase } from './internal/call-request.js';
import { defined } from './internal/defined.js';
import { isLeanInit, leanCaller, leanMethods } from './internal/lean-call.js';
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

const methods = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

export function createLoyaltyClient(options: LoyaltyClientOptions): LoyaltyClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Middleware sees a real Request. Without any, a call is never made into a Request before its
  // attempts (see CallRequest). openapi-fetch builds the request synchronously when a call starts,
  // so a flag set around that start tells its Request class about the call's own middleware.
  const registered: Middleware[] = [];
  let callHasMiddleware = false;
  const base = trustedBase(baseUrl);
  function ClientRequest(url: string, init: RequestInit) {
    return registered.length > 0 || callHasMiddleware ? new ReplayableRequest(url, init) : callRequest(url, init, base);
  }
  // openapi-fetch checks what onRequest returns with `instanceof` its Request class: any Request passes.
  ClientRequest.prototype = Request.prototype;
  const transport = createTransport({ ...options, baseUrl });
  const headers = { accept: 'application/json' };
  const client = createClient<paths>({
    baseUrl,
    fetch: transport as FetchLike,
    Request: ClientRequest as unknown as typeof Request,
    headers,
    pathSerializer, // `.` and `..` values are sent encoded (internal/path-serializer.ts)
  });
  // Without any middleware, GET, PUT, POST, PATCH and DELETE skip openapi-fetch's per-call work.
  const lean = leanCaller(baseUrl, base, headers, transport);
  const { use, eject } = client;
  client.use = (...middleware) => {
    for (const m of middleware) {
      use(m);
      if (m) registered.push(m);
    }
  };
  client.eject = (...middleware) => {
    eject(...middleware);
    for (const m of middleware) {
      const i = registered.indexOf(m);
      if (i !== -1) registered.splice(i, 1);
    }
  };
  type Init = { middleware?: unknown[] } | undefined;
  const withMiddleware = <T>(start: () => T): T => {
    callHasMiddleware = true;
    try {
      return start();
    } finally {
      callHasMiddleware = false;
    }
  };
  const calls = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of methods) {
    const send = defined(calls[name], `client.${name}`);
    calls[name] = leanMethods.has(name)
      ? (url, init) =>
          registered.length === 0 && isLeanInit(init)
            ? lean(name, url as string, init)
            : (init as Init)?.middleware?.length
              ? withMiddleware(() => send(url, init))
              : send(url, init)
      : (url, init) => ((init as Init)?.middleware?.length ? withMiddleware(() => send(url, init)) : send(url, init));
  }
  const { request } = calls;
  if (request)
    calls.request = (method, url, init) => {
      const name = typeof method === 'string' ? method.toUpperCase() : '';
      if (registered.length === 0 && leanMethods.has(name) && isLeanInit(init)) return lean(name, url as string, init);
      return (init as Init)?.middleware?.length
        ? withMiddleware(() => request(method, url, init))
        : request(method, url, init);
    };
  return client;
}
