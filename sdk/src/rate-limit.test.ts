import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { limiterFor, RateLimiter } from './rate-limit.js';

/**
 * A simulated API that counts requests at processing time (half-way through its latency) and
 * answers 429 past the limit, like the server: X-RateLimit-* on every response, Retry-After on 429.
 */
function simulatedApi(opts: {
  limit: number;
  windowMs: number;
  kind: 'fixed' | 'aligned' | 'sliding';
  used?: number;
  headers?: boolean;
  /** Also send the IETF draft RateLimit-Policy (w=) and RateLimit (t=, rounded up) fields. */
  ietf?: boolean;
}) {
  let windowStart = -Infinity;
  let count = opts.used ?? 0;
  if (opts.used) windowStart = Date.now();
  const log: number[] = [];
  const stats = { ok: 0, limited: 0, maxInFlight: 0, inFlight: 0, perWindow: new Map<number, number>() };

  function admit(now: number): { ok: boolean; remaining: number; retryAfter: number; resetIn: number } {
    if (opts.kind === 'sliding') {
      while (log.length && log[0]! <= now - opts.windowMs) log.shift();
      const resetIn = log.length ? log[0]! + opts.windowMs - now : opts.windowMs;
      if (log.length >= opts.limit) return { ok: false, remaining: 0, retryAfter: resetIn, resetIn };
      log.push(now);
      return { ok: true, remaining: opts.limit - log.length, retryAfter: 0, resetIn };
    }
    const start = opts.kind === 'aligned' ? Math.floor(now / opts.windowMs) * opts.windowMs : windowStart;
    if (opts.kind === 'aligned' ? start !== windowStart : now >= windowStart + opts.windowMs) {
      windowStart = opts.kind === 'aligned' ? start : now;
      count = 0;
    }
    const resetIn = windowStart + opts.windowMs - now;
    if (count >= opts.limit) return { ok: false, remaining: 0, retryAfter: resetIn, resetIn };
    count++;
    stats.perWindow.set(windowStart, (stats.perWindow.get(windowStart) ?? 0) + 1);
    return { ok: true, remaining: opts.limit - count, retryAfter: 0, resetIn };
  }

  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  async function call(latencyMs: number): Promise<Response> {
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    await wait(latencyMs / 2);
    const verdict = admit(Date.now());
    await wait(latencyMs / 2);
    stats.inFlight--;
    const headers: Record<string, string> =
      opts.headers === false
        ? {}
        : { 'x-ratelimit-limit': String(opts.limit), 'x-ratelimit-remaining': String(verdict.remaining) };
    if (opts.ietf) {
      headers['ratelimit-policy'] = `"token";q=${opts.limit};w=${opts.windowMs / 1000}`;
      headers.ratelimit = `"token";r=${verdict.remaining};t=${Math.ceil(verdict.resetIn / 1000)}`;
    }
    if (verdict.ok) {
      stats.ok++;
      return new Response('{}', { status: 200, headers });
    }
    stats.limited++;
    return new Response('{"message":"Too Many Attempts."}', {
      status: 429,
      headers: { ...headers, 'retry-after': String(Math.ceil(verdict.retryAfter / 1000)) },
    });
  }
  return { call, stats };
}

async function paced(limiter: RateLimiter, send: () => Promise<Response>, signal?: AbortSignal): Promise<Response> {
  const ticket = await limiter.acquire(signal);
  let response: Response | undefined;
  try {
    response = await send();
    return response;
  } finally {
    limiter.settle(ticket, response);
  }
}

/** Advances fake time until `promise` settles. */
async function settleWithTime<T>(promise: Promise<T>, stepMs = 1000): Promise<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; !done && i < 100_000; i++) await vi.advanceTimersByTimeAsync(stepMs);
  return promise;
}

// Deterministic pseudo-random latencies.
function latencies(seed = 7) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return 5 + (x % 80);
  };
}

describe('RateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse('2026-11-21T10:00:17.250Z'));
  });
  afterEach(() => vi.useRealTimers());

  for (const kind of ['fixed', 'aligned', 'sliding'] as const) {
    it(`sends 2,000 concurrent calls against 600/min (${kind} window) with zero 429s`, async () => {
      const api = simulatedApi({ limit: 600, windowMs: 60_000, kind });
      const limiter = new RateLimiter();
      const latency = latencies();
      const start = Date.now();
      const all = Promise.all(Array.from({ length: 2000 }, () => paced(limiter, () => api.call(latency()))));
      const responses = await settleWithTime(all);
      expect(api.stats.limited).toBe(0);
      expect(responses.every((r) => r.status === 200)).toBe(true);
      expect(api.stats.ok).toBe(2000);
      // Four windows' worth of work; pacing costs little more than the windows themselves.
      expect(Date.now() - start).toBeLessThan(4 * 60_000 + 5_000);
    }, 60_000);
  }

  it('learns the window length from RateLimit-Policy (a server configured with a short window)', async () => {
    const api = simulatedApi({ limit: 600, windowMs: 5_000, kind: 'fixed', ietf: true });
    const limiter = new RateLimiter();
    const latency = latencies(11);
    const start = Date.now();
    await settleWithTime(
      Promise.all(Array.from({ length: 2000 }, () => paced(limiter, () => api.call(latency())))),
      50,
    );
    expect(api.stats.limited).toBe(0);
    expect(limiter.windowMs).toBe(5_000);
    expect(Date.now() - start).toBeLessThan(4 * 5_000 + 2_000);
  }, 60_000);

  it('resumes when RateLimit t= says the window resets, not a whole window later', async () => {
    // Clock-aligned minutes; we start 17 s into one, so it resets 43 s after our burst.
    const api = simulatedApi({ limit: 100, windowMs: 60_000, kind: 'aligned', ietf: true });
    const limiter = new RateLimiter();
    const start = Date.now();
    await settleWithTime(Promise.all(Array.from({ length: 150 }, () => paced(limiter, () => api.call(20)))), 50);
    expect(api.stats.limited).toBe(0);
    expect(Date.now() - start).toBeLessThan(46_000);
    expect(Date.now() - start).toBeGreaterThanOrEqual(42_750);
  }, 60_000);

  it('holds back when another client of the same token already used most of the window', async () => {
    const api = simulatedApi({ limit: 600, windowMs: 60_000, kind: 'fixed', used: 590 });
    const limiter = new RateLimiter();
    const latency = latencies(3);
    await settleWithTime(Promise.all(Array.from({ length: 700 }, () => paced(limiter, () => api.call(latency())))));
    expect(api.stats.limited).toBe(0);
    expect(api.stats.ok).toBe(700);
  }, 60_000);

  it('sends only a small burst before the first response shows the limit', async () => {
    const api = simulatedApi({ limit: 600, windowMs: 60_000, kind: 'fixed' });
    const limiter = new RateLimiter({ burst: 4 });
    const all = Promise.all(Array.from({ length: 50 }, () => paced(limiter, () => api.call(100))));
    await vi.advanceTimersByTimeAsync(50);
    expect(api.stats.inFlight).toBe(4);
    await settleWithTime(all);
    expect(api.stats.maxInFlight).toBeGreaterThan(40);
  });

  it('holds every caller for Retry-After after a 429, then probes with one request', async () => {
    const limiter = new RateLimiter();
    let inFlight = 0;
    let maxAfterHold = 0;
    let first = true;
    const send = async () => {
      inFlight++;
      if (Date.now() >= holdEnds) maxAfterHold = Math.max(maxAfterHold, inFlight);
      await new Promise((r) => setTimeout(r, 10));
      inFlight--;
      if (first) {
        first = false;
        return new Response('{}', {
          status: 429,
          headers: { 'retry-after': '7', 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '0' },
        });
      }
      return new Response('{}', { headers: { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '500' } });
    };
    const holdEnds = Date.now() + 10 + 7000;
    const firstCall = paced(limiter, send);
    await vi.advanceTimersByTimeAsync(10);
    expect((await firstCall).status).toBe(429);
    const sentAt: number[] = [];
    const rest = Promise.all(
      Array.from({ length: 20 }, () =>
        paced(limiter, () => {
          sentAt.push(Date.now());
          return send();
        }),
      ),
    );
    await settleWithTime(rest, 5);
    expect(Math.min(...sentAt)).toBeGreaterThanOrEqual(holdEnds);
    expect(sentAt.filter((t) => t === Math.min(...sentAt))).toHaveLength(1);
    expect(maxAfterHold).toBeGreaterThan(1);
  });

  it('passes everything through when responses carry no rate-limit headers', async () => {
    const api = simulatedApi({ limit: 600, windowMs: 60_000, kind: 'fixed', headers: false });
    const limiter = new RateLimiter();
    const warmUp = paced(limiter, () => api.call(10));
    await vi.advanceTimersByTimeAsync(10);
    await warmUp;
    const all = Promise.all(Array.from({ length: 100 }, () => paced(limiter, () => api.call(100))));
    await vi.advanceTimersByTimeAsync(1);
    expect(api.stats.inFlight).toBe(100);
    await settleWithTime(all);
  });

  it('rejects a queued caller at once when its signal aborts, and serves the others', async () => {
    const limiter = new RateLimiter({ burst: 1 });
    const controller = new AbortController();
    const first = paced(limiter, () => new Promise((r) => setTimeout(() => r(new Response('{}')), 100)));
    const aborted = paced(limiter, async () => new Response('{}'), controller.signal);
    const third = paced(limiter, async () => new Response('{}'));
    expect(limiter.queued).toBe(2);
    controller.abort(new Error('no longer needed'));
    await expect(aborted).rejects.toThrow('no longer needed');
    expect(limiter.queued).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    await first;
    expect((await third).status).toBe(200);
  });

  it("ignores a 401's rate-limit headers (the IP's budget, not the token's)", async () => {
    const limiter = new RateLimiter({ burst: 1 });
    const ok = (remaining: string) =>
      new Response('{}', { headers: { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': remaining } });
    await paced(limiter, async () => ok('500'));
    await paced(
      limiter,
      async () =>
        new Response('{}', { status: 401, headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0' } }),
    );
    let sent = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        paced(limiter, async () => {
          sent++;
          return ok('400');
        }),
      ),
    );
    expect(sent).toBe(5);
    expect(limiter.limit).toBe(600);
  });

  it('counts a request answered while a later one was out as possibly after it (counted late, answered early)', async () => {
    // Under load the server counts and answers in its own order. Q goes out before R's answer, S
    // after it; the server counts R, S, then Q, and Q's answer arrives before S's. When S's answer
    // (newer than R's) comes, Q is neither in flight nor in S's Remaining: 8 are left, not 9.
    const limiter = new RateLimiter({ burst: 2 });
    const ok = (remaining: number) =>
      new Response('{}', { headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': String(remaining) } });
    const r = await limiter.acquire();
    const q = await limiter.acquire();
    limiter.settle(r, ok(10));
    const s = await limiter.acquire();
    limiter.settle(q, ok(8));
    limiter.settle(s, ok(9));
    let sent = 0;
    while (limiter.tryAcquire()) sent++;
    expect(sent).toBe(8);
  });

  it('frees the slot of a request that failed without a response', async () => {
    const limiter = new RateLimiter({ burst: 1 });
    await expect(paced(limiter, () => Promise.reject(new TypeError('fetch failed')))).rejects.toThrow('fetch failed');
    expect(limiter.inFlight).toBe(0);
    expect((await paced(limiter, async () => new Response('{}'))).status).toBe(200);
  });
});

describe('limiterFor', () => {
  it('shares one limiter per base URL and token', () => {
    expect(limiterFor('http://a.test', 't1')).toBe(limiterFor('http://a.test', 't1'));
    expect(limiterFor('http://a.test', 't1')).not.toBe(limiterFor('http://a.test', 't2'));
    expect(limiterFor('http://a.test', 't1')).not.toBe(limiterFor('http://b.test', 't1'));
  });
});
