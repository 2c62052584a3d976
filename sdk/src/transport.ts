/**
 * The fetch that every call of the client goes through: idempotency key, then retries; each
 * attempt takes a bearer token, waits its turn in the shared rate limiter, and is sent with a
 * timeout. A 401 with client credentials is resent once with a fresh token.
 */
import { clientCredentialsToken, fixedToken, type ClientCredentials, type TokenSource } from './auth.js';
import { ensureIdempotencyKey } from './idempotency.js';
import { limiterFor, type PacingOptions, type Ticket } from './rate-limit.js';
import { abortable, CallRequest, fetchWithTimeout, retryDefaults, sendWithRetry, setHeader, type Attempt, type AttemptContext, type FetchWithInit, type RetryOptions } from './retry.js';

export type FetchLike = (request: Request) => Promise<Response>;
/** What the client hands its transport: a Request, or a `CallRequest` when no middleware sees it. */
type Sendable = Request | CallRequest;

export interface TransportOptions {
  /** Without a trailing slash. */
  baseUrl: string;
  token?: string | undefined;
  clientCredentials?: ClientCredentials | undefined;
  fetch?: FetchLike | undefined;
  retry?: RetryOptions | false | undefined;
  timeoutMs?: number | undefined;
  userAgent?: string | undefined;
  pacing?: boolean | PacingOptions | undefined;
}

export function createTransport(options: TransportOptions): (request: Sendable) => Promise<Response> {
  const { baseUrl, userAgent } = options;
  // The global fetch is looked up per call, so one patched later (msw in tests) is used. A custom
  // fetch gets a Request; the global one gets (template, init) and builds the only copy itself.
  const custom = options.fetch;
  const baseFetch: FetchWithInit = custom ? (input, init) => custom(new Request(input, init)) : (input, init) => globalThis.fetch(input, init);
  const retry = options.retry === false ? false : { ...retryDefaults, ...options.retry };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pacing = options.pacing === false ? undefined : options.pacing === true ? {} : (options.pacing ?? {});

  let tokens: TokenSource;
  if (options.clientCredentials) {
    const plain: Attempt = (ctx) => fetchWithTimeout((signal) => ctx.send(baseFetch, signal), ctx.signal, ctx.timeoutMs);
    tokens = clientCredentialsToken(baseUrl, options.clientCredentials, (request) =>
      sendWithRetry(request, plain, retry, timeoutMs),
    );
  } else if (options.token !== undefined) {
    tokens = fixedToken(options.token);
  } else {
    throw new TypeError('createLoyaltyClient: pass `token` or `clientCredentials`');
  }

  async function sendAs(token: string, ctx: AttemptContext): Promise<Response> {
    const limiter = pacing && limiterFor(baseUrl, token, pacing);
    let ticket: Ticket | undefined;
    if (limiter && !(ticket = ctx.signal.aborted ? undefined : limiter.tryAcquire())) {
      const waitStart = Date.now();
      ticket = await limiter.acquire(abortable(ctx.signal));
      ctx.waited(Date.now() - waitStart);
    }
    setHeader(ctx.headers, 'authorization', `Bearer ${token}`);
    let response: Response | undefined;
    try {
      return (response = await fetchWithTimeout((signal) => ctx.send(baseFetch, signal), ctx.signal, ctx.timeoutMs));
    } finally {
      if (limiter) limiter.settle(ticket!, response);
    }
  }

  const fixed = options.clientCredentials ? undefined : options.token;
  // A fixed token is never refreshed: a 401 is the answer.
  const attempt: Attempt = fixed !== undefined ? (ctx) => sendAs(fixed, ctx) : async (ctx) => {
    const token = await tokens.get(abortable(ctx.signal));
    if (typeof token !== 'string') return token;
    const response = await sendAs(token, ctx);
    if (response.status !== 401 || !tokens.invalidate(token)) return response;
    const fresh = await tokens.get(abortable(ctx.signal));
    if (typeof fresh !== 'string') return fresh;
    response.body?.cancel().catch(() => {});
    return sendAs(fresh, ctx);
  };

  return (request) => {
    ensureIdempotencyKey(request);
    if (userAgent) setHeader(request.headers, 'user-agent', userAgent);
    return sendWithRetry(request, attempt, retry, timeoutMs);
  };
}
