/**
 * Retries: connection errors, per-attempt timeouts, 408, 429, 5xx, and 409 only when the body's
 * `error` is `idempotency_in_progress`; never another 4xx. `Retry-After` wins over backoff;
 * otherwise full-jitter exponential backoff. A deadline bounds the whole call; the caller's
 * AbortSignal stops any wait at once.
 */
import { LoyaltyError } from './errors.js';
import type { CallObserver, ClientHooks, ResponseHookInfo } from './internal/hooks.js';
import { callerRequestId, noteSentRequestId, REQUEST_ID_HEADER, requestIdSequence } from './internal/request-ids.js';
import { parseRetryAfter } from './internal/retry-after.js';
import { sleep } from './internal/sleep.js';

export interface RetryOptions {
  /** Attempts in total, the first included. Default 4. */
  maxAttempts?: number;
  /** Backoff ceiling of the first retry; it doubles per retry, the delay is random below it. Default 500. */
  baseDelayMs?: number;
  /** Largest backoff ceiling. Default 20 000. (`Retry-After` is honoured even when longer.) */
  maxDelayMs?: number;
  /**
   * Time budget of the whole call, retries and their waits included: an attempt is cut short at
   * it, and a retry that would start after it is not made (the last response is returned).
   * Time spent waiting for a rate-limit slot does not count. Default 60 000.
   */
  deadlineMs?: number;
  /**
   * Called before each retry, once its wait is known: to tell a person that the call is being
   * retried (a CLI that would otherwise be silent for seconds), or to decide against it. Return
   * `false` to make this outcome the call's answer (the response, or the `network_error` /
   * `timeout` error) instead of retrying.
   */
  onRetry?: ((notice: RetryNotice) => unknown) | undefined;
}

/** A retry about to be made (`RetryOptions.onRetry`). */
export interface RetryNotice {
  method: string;
  url: string;
  /** The attempt that failed (1 for the first) and how many are allowed in all. */
  attempt: number;
  maxAttempts: number;
  /** The wait before the next attempt. */
  delayMs: number;
  /** The retryable status that was answered (408, 409 in progress, 429, 5xx), when there was an answer. */
  status?: number;
  /** Why there was no answer: a `network_error` (its `cause` holds the system error) or a `timeout`. */
  error?: LoyaltyError;
}

/** Retry options with every default filled in (`onRetry` stays optional). */
export type RetryPolicy = Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>;

export const retryDefaults: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  deadlineMs: 60_000,
};

/** The part of `fetch` an attempt needs: the request (or its URL), plus its body and signal for this attempt. */
export type FetchWithInit = (input: Request | string, init: RequestInit) => Promise<Response>;

export interface AttemptContext {
  /** 1 for the first attempt. */
  attempt: number;
  /** How long this attempt may wait for response headers once it is sent. */
  timeoutMs: number;
  /** The caller's signal. */
  signal: AbortSignal;
  /** The request's headers, shared by all attempts: set credentials here before sending. */
  headers: Headers;
  /**
   * Sends this attempt with `signal` (default: the caller's), with a request id of its own in
   * `X-Request-Id` (see request-id.ts). Every attempt is a new request made
   * from the template and the body it was created with (or its bytes, read once), so a body is
   * never "already used" and keeps a known length.
   */
  send(fetchFn: FetchWithInit, signal?: AbortSignal): Promise<Response>;
  /** Reports time spent waiting before sending (rate-limit pacing); it does not count against the deadline. */
  waited(ms: number): void;
  /**
   * No retry starts after this time (epoch ms; default Infinity): an attempt sets it when what it
   * sends with stops being valid then (the call's pinned token). The call ends as at its deadline.
   */
  sendBy: number;
}

/** One attempt: `ctx.send(...)` once (or again after a 401), resolving with the response or throwing. */
export type Attempt = (ctx: AttemptContext) => Promise<Response>;

const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/** Full jitter: uniformly random below min(maxDelayMs, baseDelayMs * 2^(retry-1)). */
export function backoffDelay(retry: number, options: RetryPolicy, random = Math.random): number {
  return Math.floor(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retry - 1)));
}

async function isInProgress(response: Response): Promise<boolean> {
  try {
    const body = (await response.clone().json()) as { error?: unknown };
    return body?.error === 'idempotency_in_progress';
  } catch {
    return false;
  }
}

/** Milliseconds to wait before retrying after this outcome, or undefined when it is final. */
export async function retryDelay(
  response: Response | undefined,
  attempt: number,
  options: RetryPolicy,
  random = Math.random,
): Promise<number | undefined> {
  if (response) {
    const { status } = response;
    if (status === 409 ? !(await isInProgress(response)) : !retryableStatus(status)) return undefined;
    const after = parseRetryAfter(response.headers.get('retry-after'));
    if (after !== undefined) return after;
  }
  return backoffDelay(attempt, options, random);
}

/**
 * Errors that are the outcome of a whole retried call (the token request of a call with client
 * credentials): a call that gets one from an attempt does not retry it again, so the retries of
 * the two do not multiply (16 attempts and ten seconds against a server that is down).
 */
const retriesSpent = new WeakSet<object>();

/** The error of a call that got no response; `requestId`: the id its last request was sent with. */
function toThrown(error: unknown, requestId: string | undefined): LoyaltyError {
  if (error instanceof LoyaltyError) {
    if (error.requestId === undefined && requestId !== undefined)
      (error as { requestId: string | undefined }).requestId = requestId;
    return error;
  }
  const detail =
    error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  return new LoyaltyError({
    status: 0,
    code: 'network_error',
    message: `Network error: ${detail}`,
    cause: error,
    requestId,
  });
}

/** The error a call ends with when no attempt produced a response, marked as spent. */
function spent(error: unknown, requestId: string | undefined): LoyaltyError {
  const thrown = toThrown(error, requestId);
  retriesSpent.add(thrown);
  return thrown;
}

/**
 * Sends `template` through `attempt` until the outcome is final. Resolves with the last response
 * (errors stay values); throws the caller's abort reason when aborted, or a `LoyaltyError`
 * (`network_error` or `timeout`) when no attempt produced a response.
 */
export async function sendWithRetry(
  template: Request,
  attempt: Attempt,
  options: RetryPolicy | false,
  timeoutMs: number,
  random = Math.random,
  observer?: CallObserver,
): Promise<Response> {
  const { signal, headers } = template;
  const maxAttempts = options ? options.maxAttempts : 1;
  const deadlineMs = options ? options.deadlineMs : Infinity;
  // The body's bytes, read once: each attempt sends them (the template's own stream is used up).
  const body = template.body ? await template.arrayBuffer() : undefined;
  const start = Date.now();
  let waited = 0;
  const elapsed = () => Date.now() - start - waited;
  const nextId = requestIdSequence(callerRequestId(headers));
  let lastId: string | undefined;
  // What the observer (hooks, logger) is told of the current request; `last`: its answer.
  const path = observer && new URL(template.url).pathname;
  const about = (attempt: number, requestId: string) => ({
    method: template.method,
    path: path ?? '',
    attempt,
    elapsedMs: Date.now() - start,
    requestId,
    pacingWaitMs: waited,
  });
  let last: ResponseHookInfo | undefined;
  // A closure, so that the compiler does not take `last` for undefined after it (the sends set it).
  const forget = () => {
    last = undefined;
  };
  const answered = (attempt: number, id: string, response: Response | undefined, error?: unknown) => {
    if (!observer) return;
    const code = error instanceof LoyaltyError && error.code === 'timeout' ? 'timeout' : 'network_error';
    last = {
      ...about(attempt, response?.headers.get(REQUEST_ID_HEADER) ?? id),
      status: response?.status ?? 0,
      replayed: response?.headers.get('idempotent-replayed') === 'true',
      ...(response ? {} : { error: code }),
    };
    observer.response(last);
  };
  const ctx: AttemptContext = {
    attempt: 0,
    timeoutMs,
    signal,
    headers,
    send: (fetchFn, s = signal) => {
      const id = nextId();
      const attempt = ctx.attempt;
      lastId = id;
      headers.set(REQUEST_ID_HEADER, id);
      observer?.request(about(attempt, id));
      return fetchFn(template, body === undefined ? { signal: s } : { body, signal: s }).then(
        (response) => {
          noteSentRequestId(response, id);
          answered(attempt, id, response);
          return response;
        },
        (error: unknown) => {
          answered(attempt, id, undefined, s.reason ?? error);
          throw error;
        },
      );
    },
    waited: (ms) => (waited += ms),
    sendBy: Infinity,
  };
  for (let n = 1; ; n++) {
    ctx.attempt = n;
    forget();
    ctx.timeoutMs = Math.max(1, Math.min(timeoutMs > 0 ? timeoutMs : Infinity, deadlineMs - elapsed()));
    let response: Response | undefined;
    let error: unknown;
    try {
      response = await attempt(ctx);
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      if (typeof e === 'object' && e !== null && retriesSpent.has(e)) throw spent(e, lastId);
      error = e;
    }
    // A final status needs no look at its body (most calls end here, without another await).
    if (response && response.status !== 409 && !retryableStatus(response.status)) {
      if (last) observer?.end(last);
      return response;
    }
    const delay = options && n < maxAttempts ? await retryDelay(response, n, options, random) : undefined;
    const retry =
      delay !== undefined &&
      elapsed() + delay < deadlineMs &&
      Date.now() + delay <= ctx.sendBy &&
      options &&
      options.onRetry?.({
        method: template.method,
        url: template.url,
        attempt: n,
        maxAttempts,
        delayMs: delay,
        ...(response ? { status: response.status } : { error: toThrown(error, lastId) }),
      }) !== false;
    if (!retry || delay === undefined) {
      if (last) observer?.end(last);
      if (response) return response;
      throw spent(error, lastId);
    }
    if (last) observer?.retry({ ...last, delayMs: delay });
    // Free the connection of a response nobody will read (not awaited: a teed body settles late).
    response?.body?.cancel().catch(() => {});
    await sleep(delay, signal);
  }
}

/**
 * `send(signal)`, aborted with a `timeout` LoyaltyError when no response headers arrive within
 * `timeoutMs` (0 or Infinity: no timeout). `signal` (the caller's) aborts it too.
 */
export async function fetchWithTimeout(
  send: (signal: AbortSignal) => Promise<Response>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Response> {
  if (!(timeoutMs > 0 && timeoutMs < Infinity)) return send(signal);
  // One controller for both causes (a forwarding listener costs a fraction of AbortSignal.any).
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', forward, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(new LoyaltyError({ status: 0, code: 'timeout', message: `No response within ${timeoutMs} ms` })),
    timeoutMs,
  );
  try {
    return await send(controller.signal);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
}

/**
 * Options of one call, beside openapi-fetch's own (`params`, `body`, `headers`, `signal`, …):
 *
 *     await client.GET('/tags', { params, retry: { maxAttempts: 1 }, timeoutMs: 500, signal });
 */
export interface CallOptions {
  /** This call's retry policy, over the client's (`false`: a single attempt). */
  retry?: RetryOptions | false | undefined;
  /** This call's per-attempt timeout, instead of the client's. */
  timeoutMs?: number | undefined;
  /** Hooks for this call, called after the client's. */
  hooks?: ClientHooks | undefined;
}
