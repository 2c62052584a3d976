/**
 * What every endpoint of the mock API goes through, like the server's request lifecycle: the
 * request id, the bearer token, the client's forbidden requests, the rate limit, faults (the
 * server's `Prefer: fault=…` kinds: rate_limit, server_error, timeout, in_progress, network_reset), and
 * idempotency (a repeated `Idempotency-Key` replays the stored 2xx answer, or answers 422
 * `idempotency_key_reuse` when the request differs).
 */
import { HttpResponse } from 'msw';
import type { MockClient, MockFault, MockLoyaltyApiOptions, MockRequest, Schemas } from './types.js';

/** Waits `ms`, or until the client aborts the request (a timeout fault holds its answer). */
const held = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** The X-Request-Id values the server keeps (others are replaced by a UUID). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:+=-]{1,128}$/;

export interface Lifecycle {
  /** Answers `request` with `handle`'s response, inside the lifecycle. */
  run(request: Request, handle: () => Response | Promise<Response>, authenticated: boolean): Promise<Response>;
  fail(fault: MockFault): void;
  /** The client each token was issued to. */
  tokenClients: Map<string, MockClient>;
}

const parse = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
};

export function createLifecycle(options: MockLoyaltyApiOptions, requests: MockRequest[]): Lifecycle {
  const faults: (MockFault & { left: number })[] = [];
  const stored = new Map<string, { request: string; status: number; body: string; headers: [string, string][] }>();
  const windows = new Map<string, { start: number; count: number }>();
  const tokenClients = new Map<string, MockClient>();

  function rateLimitHeaders(token: string): Record<string, string> | Response {
    const limit = options.rateLimit;
    if (!limit) return {};
    const t = Date.now();
    let w = windows.get(token);
    if (!w || t >= w.start + limit.windowMs) {
      w = { start: t, count: 0 };
      windows.set(token, w);
    }
    const resetIn = Math.ceil((w.start + limit.windowMs - t) / 1000);
    const headers = {
      'x-ratelimit-limit': String(limit.limit),
      'ratelimit-policy': `"token";q=${limit.limit};w=${Math.ceil(limit.windowMs / 1000)}`,
    };
    if (w.count >= limit.limit)
      return HttpResponse.json<Schemas['RateLimitError']>(
        { message: 'Too Many Attempts.' },
        { status: 429, headers: { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': String(resetIn) } },
      );
    w.count++;
    const remaining = String(limit.limit - w.count);
    return { ...headers, 'x-ratelimit-remaining': remaining, ratelimit: `"token";r=${remaining};t=${resetIn}` };
  }

  function takeFault(method: string, path: string) {
    const fault = faults.find(
      (f) => f.left > 0 && (!f.path || f.path === path) && (!f.method || f.method.toUpperCase() === method),
    );
    if (fault) fault.left--;
    return fault;
  }

  async function run(
    request: Request,
    handle: () => Response | Promise<Response>,
    authenticated: boolean,
  ): Promise<Response> {
    const url = new URL(request.url);
    const m = request.method;
    const key = m === 'GET' ? null : request.headers.get('idempotency-key');
    const sentId = request.headers.get('x-request-id');
    const requestId = sentId !== null && SAFE_REQUEST_ID.test(sentId) ? sentId : crypto.randomUUID();
    const record: MockRequest = {
      method: m,
      path: url.pathname,
      idempotencyKey: key,
      status: 0,
      requestId,
      headers: request.headers,
      body: undefined,
    };
    requests.push(record);
    const text = m === 'GET' || m === 'HEAD' ? '' : await request.clone().text();
    record.body = parse(text);
    const respond = (response: Response) => {
      record.status = response.status;
      response.headers.set('x-request-id', requestId);
      return response;
    };
    const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
    if (authenticated && !token)
      return respond(
        HttpResponse.json<Schemas['Error']>({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 }),
      );
    if (token && tokenClients.get(token)?.forbidden?.includes(`${m} ${url.pathname}`))
      return respond(
        HttpResponse.json<Schemas['Error']>(
          { message: 'This action is unauthorized.', error: 'forbidden' },
          { status: 403 },
        ),
      );
    const limited = rateLimitHeaders(token ?? 'ip');
    if (limited instanceof Response) return respond(limited);
    const fault = takeFault(m, url.pathname);
    if (fault?.with === 'rate_limit')
      return respond(
        HttpResponse.json<Schemas['RateLimitError']>(
          { message: 'Too Many Attempts.' },
          { status: 429, headers: { 'retry-after': String(fault.retryAfter ?? 1), 'x-ratelimit-remaining': '0' } },
        ),
      );
    if (fault?.with === 'network_reset') {
      record.status = 0;
      return HttpResponse.error();
    }
    if (fault?.with === 'timeout') {
      await held(fault.delayMs ?? 35_000, request.signal);
      return respond(
        HttpResponse.json<Schemas['Error']>(
          { message: 'Server Error', error: 'server_error', request_id: requestId },
          { status: 503 },
        ),
      );
    }
    if (fault?.with === 'server_error')
      return respond(
        HttpResponse.json<Schemas['Error']>(
          { message: 'Server Error', error: 'server_error', request_id: requestId },
          { status: fault.status ?? 503 },
        ),
      );
    const storeKey = key && `${token} ${m} ${url.pathname} ${key}`;
    const replay = storeKey ? stored.get(storeKey) : undefined;
    if (replay && replay.request !== text)
      return respond(
        HttpResponse.json<Schemas['IdempotencyError']>(
          { message: 'This Idempotency-Key was already used for a different request.', error: 'idempotency_key_reuse' },
          { status: 422 },
        ),
      );
    if (replay)
      return respond(
        new Response(replay.body, {
          status: replay.status,
          headers: [...replay.headers, ['idempotent-replayed', 'true'], ...Object.entries(limited)],
        }),
      );
    const response = await handle();
    if (storeKey && response.ok)
      stored.set(storeKey, {
        request: text,
        status: response.status,
        body: await response.clone().text(),
        headers: [...response.headers],
      });
    for (const [name, value] of Object.entries(limited)) response.headers.set(name, value);
    if (fault?.with === 'in_progress' && storeKey)
      return respond(
        HttpResponse.json<Schemas['IdempotencyError']>(
          {
            message: 'A request with this Idempotency-Key is still being processed.',
            error: 'idempotency_in_progress',
          },
          { status: 409, headers: { 'retry-after': '0' } },
        ),
      );
    return respond(response);
  }

  return {
    run,
    fail: (fault) => void faults.push({ ...fault, left: fault.times ?? 1 }),
    tokenClients,
  };
}

/** What openapi-msw hands a resolver, as far as `served` needs it. */
interface ResolverInfo<Result> {
  request: Request;
  response: { untyped(response: Response): Result };
}

/**
 * A resolver for openapi-msw's typed `http`, answering inside the lifecycle. `handle` builds its
 * answers with the `response(status).json(body)` helper, which checks them against `paths`.
 */
export function served<Info extends ResolverInfo<Result>, Result>(
  lifecycle: Lifecycle,
  handle: (info: Info) => Response | Promise<Response>,
  authenticated = true,
): (info: Info) => Promise<Result> {
  return async (info) => info.response.untyped(await lifecycle.run(info.request, () => handle(info), authenticated));
}
