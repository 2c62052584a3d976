/**
 * The fetch that every call of the client goes through: idempotency key, then retries; each
 * attempt sends the call's bearer token, waits its turn in the shared rate limiter, and is sent
 * with a timeout.
 *
 * With client credentials a call pins the token of its first attempt for all its retries: the
 * server scopes idempotency keys to the token, so a retry under a renewed token would run the
 * action again. A 401 (the request was not processed) switches the call to a fresh token once,
 * unless the call carries an Idempotency-Key and an earlier attempt may have run the action
 * (its answer was lost, a 5xx, a 409 in progress): then the 401 is the call's answer.
 */
import {
  clientCredentialsToken,
  fixedToken,
  TOKEN_MARGIN_MS,
  type ClientCredentials,
  type Token,
  type TokenSource,
} from '../auth.js';
import type { CallOptions } from '../retry.js';
import { callObserver, type ClientHooks, type Logger, type LogLevel } from './hooks.js';
import { limiterFor, type PacingOptions } from '../rate-limit.js';
import {
  fetchWithTimeout,
  retryDefaults,
  sendWithRetry,
  type Attempt,
  type AttemptContext,
  type FetchWithInit,
  type RetryOptions,
} from '../retry.js';
import { ensureIdempotencyKey } from './idempotency-key.js';

export type FetchLike = (request: Request) => Promise<Response>;

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
  hooks?: ClientHooks | undefined;
  logger?: Logger | undefined;
  logLevel?: LogLevel | undefined;
}

/** The client's `fetch` (openapi-fetch's `fetch` option): the Request of a call, after any middleware. */
export function createTransport(options: TransportOptions): FetchLike {
  const { baseUrl, userAgent } = options;
  // The global fetch is looked up per call, so one patched later (msw in tests) is used. A custom
  // fetch gets a Request; the global one gets (template, init) and builds the only copy itself.
  const custom = options.fetch;
  const baseFetch: FetchWithInit = custom
    ? (input, init) => custom(new Request(input, init))
    : (input, init) => globalThis.fetch(input, init);
  const retry = options.retry === false ? false : { ...retryDefaults, ...options.retry };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pacing = options.pacing === false ? undefined : options.pacing === true ? {} : (options.pacing ?? {});

  let tokens: TokenSource;
  if (options.clientCredentials) {
    const plain: Attempt = (ctx) =>
      fetchWithTimeout((signal) => ctx.send(baseFetch, signal), ctx.signal, ctx.timeoutMs);
    tokens = clientCredentialsToken(
      baseUrl,
      options.clientCredentials,
      (request) => sendWithRetry(request, plain, retry, timeoutMs),
      (retry ? retry.deadlineMs : 0) + TOKEN_MARGIN_MS,
    );
  } else if (options.token !== undefined) {
    tokens = fixedToken(options.token);
  } else {
    throw new TypeError('createLoyaltyClient: pass `token` or `clientCredentials`');
  }

  async function sendAs(token: string, ctx: AttemptContext): Promise<Response> {
    const limiter = pacing && limiterFor(baseUrl, token, pacing);
    if (!limiter) {
      ctx.headers.set('authorization', `Bearer ${token}`);
      return fetchWithTimeout((signal) => ctx.send(baseFetch, signal), ctx.signal, ctx.timeoutMs);
    }
    let ticket = ctx.signal.aborted ? undefined : limiter.tryAcquire();
    if (!ticket) {
      const waitStart = Date.now();
      pacing.onWait?.({ waiting: true, waitedMs: 0 });
      try {
        ticket = await limiter.acquire(ctx.signal);
      } finally {
        pacing.onWait?.({ waiting: false, waitedMs: Date.now() - waitStart });
      }
      ctx.waited(Date.now() - waitStart);
    }
    ctx.headers.set('authorization', `Bearer ${token}`);
    let response: Response | undefined;
    try {
      response = await fetchWithTimeout((signal) => ctx.send(baseFetch, signal), ctx.signal, ctx.timeoutMs);
      return response;
    } finally {
      limiter.settle(ticket, response);
    }
  }

  /** The attempts of one call: the token of its first attempt, kept for all of them (see above). */
  function pinnedTokenAttempts(): Attempt {
    let pinned: Token | undefined;
    // An earlier attempt with the pinned token may have run the action.
    let mayHaveRun = false;
    const pin = (token: Token, ctx: AttemptContext) => {
      pinned = token;
      ctx.sendBy = token.sendUntil;
    };
    const send = async (token: Token, ctx: AttemptContext) => {
      try {
        const response = await sendAs(token.value, ctx);
        // 5xx: maybe a gateway's answer after the server ran it; 409: the first request still runs.
        if (response.status >= 500 || response.status === 409) mayHaveRun = true;
        return response;
      } catch (error) {
        mayHaveRun = true; // no answer: it may have been processed
        throw error;
      }
    };
    return async (ctx) => {
      let token = pinned;
      if (!token) {
        const got = await tokens.get(ctx.signal);
        if (got instanceof Response) return got;
        pin(got, ctx);
        token = got;
      }
      const unsafe = mayHaveRun && ctx.headers.has('idempotency-key');
      const response = await send(token, ctx);
      if (response.status !== 401 || unsafe || !tokens.invalidate(token.value)) return response;
      const fresh = await tokens.get(ctx.signal);
      if (fresh instanceof Response) return fresh;
      response.body?.cancel().catch(() => {});
      pin(fresh, ctx);
      return send(fresh, ctx);
    };
  }

  const fixed = options.clientCredentials ? undefined : options.token;
  // A fixed token is never refreshed: a 401 is the answer.
  const fixedAttempt: Attempt | undefined = fixed !== undefined ? (ctx) => sendAs(fixed, ctx) : undefined;

  const { hooks, logger, logLevel } = options;
  return (request) => {
    ensureIdempotencyKey(request);
    if (userAgent) request.headers.set('user-agent', userAgent);
    // A call's own options: openapi-fetch sets the fetch options it does not know on the Request.
    const call = request as Request & CallOptions;
    const policy =
      call.retry === undefined ? retry : call.retry && { ...retryDefaults, ...options.retry, ...call.retry };
    return sendWithRetry(
      request,
      fixedAttempt ?? pinnedTokenAttempts(),
      policy,
      call.timeoutMs ?? timeoutMs,
      Math.random,
      callObserver([hooks, call.hooks], logger, logLevel),
    );
  };
}
