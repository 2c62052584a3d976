import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LoyaltyError } from './errors.js';
import { parseRetryAfter } from './internal/retry-after.js';
import { backoffDelay, fetchWithTimeout, retryDefaults, sendWithRetry, type Attempt } from './retry.js';

const policy = { ...retryDefaults, maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, deadlineMs: 10_000 };
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** An attempt function answering from a script, recording what each attempt sent. */
function scripted(outcomes: Array<Response | Error | (() => Promise<Response>)>) {
  const sent: { body: string; signal: AbortSignal }[] = [];
  const attempt: Attempt = (ctx) =>
    ctx.send(async (input, init) => {
      const request = new Request(input, init);
      sent.push({ body: await request.text(), signal: request.signal });
      const next = outcomes.shift();
      if (!next) throw new Error('script exhausted');
      if (next instanceof Error) throw next;
      return typeof next === 'function' ? next() : next;
    });
  return { attempt, sent };
}

const post = (init: RequestInit = {}) =>
  new Request('http://api.test/members', { method: 'POST', body: JSON.stringify({ email: 'a@example.com' }), ...init });

describe('parseRetryAfter', () => {
  it('reads delta seconds', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
  });
  it('reads an HTTP date relative to now', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });
  it('ignores a missing or unreadable value', () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('is full jitter below a doubling ceiling capped at maxDelayMs', () => {
    expect(backoffDelay(1, policy, () => 0.999)).toBe(99);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(200);
    expect(backoffDelay(10, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(2, policy, () => 0)).toBe(0);
  });
});

describe('sendWithRetry', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('retries 408, 429 and 5xx and returns the first final response', async () => {
    const { attempt, sent } = scripted([json(503, {}), json(408, {}), json(429, {}), json(201, { ok: true })]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0);
    await vi.runAllTimersAsync();
    const response = await done;
    expect(response.status).toBe(201);
    expect(sent).toHaveLength(4);
  });

  it('sends the same body on every attempt (each attempt gets a fresh copy)', async () => {
    const { attempt, sent } = scripted([json(500, {}), new TypeError('fetch failed'), json(200, {})]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0);
    await vi.runAllTimersAsync();
    await done;
    expect(sent.map((s) => s.body)).toEqual(Array(3).fill('{"email":"a@example.com"}'));
  });

  it('reads a stream body once and sends its bytes on every attempt', async () => {
    const { attempt, sent } = scripted([json(503, {}), json(200, {})]);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"a":'));
        controller.enqueue(new TextEncoder().encode('1}'));
        controller.close();
      },
    });
    const template = new Request('http://api.test/members', {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const done = sendWithRetry(template, attempt, policy, 0, () => 0);
    await vi.runAllTimersAsync();
    await done;
    expect(sent.map((s) => s.body)).toEqual(['{"a":1}', '{"a":1}']);
  });

  it('never retries other 4xx', async () => {
    for (const status of [400, 401, 403, 404, 422]) {
      const { attempt, sent } = scripted([json(status, { error: 'x' }), json(200, {})]);
      const response = await sendWithRetry(post(), attempt, policy, 0);
      expect(response.status).toBe(status);
      expect(sent).toHaveLength(1);
    }
  });

  it('retries 409 only when the error is idempotency_in_progress, and leaves its body readable', async () => {
    const other = scripted([json(409, { error: 'pass_already_redeemed', message: 'x' }), json(200, {})]);
    const final = await sendWithRetry(post(), other.attempt, policy, 0);
    expect(final.status).toBe(409);
    expect(await final.json()).toEqual({ error: 'pass_already_redeemed', message: 'x' });
    expect(other.sent).toHaveLength(1);

    const busy = scripted([
      json(409, { error: 'idempotency_in_progress', message: 'busy' }, { 'retry-after': '1' }),
      json(201, {}),
    ]);
    const done = sendWithRetry(post(), busy.attempt, policy, 0);
    await vi.advanceTimersByTimeAsync(999);
    expect(busy.sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe(201);
  });

  it('waits Retry-After (seconds) instead of the backoff, even past maxDelayMs', async () => {
    const { attempt, sent } = scripted([
      json(429, { message: 'Too Many Attempts.' }, { 'retry-after': '5' }),
      json(200, {}),
    ]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0);
    await vi.advanceTimersByTimeAsync(4999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe(200);
  });

  it('waits Retry-After given as an HTTP date', async () => {
    vi.setSystemTime(Date.parse('2026-11-21T10:00:00Z'));
    const { attempt, sent } = scripted([
      json(503, {}, { 'retry-after': 'Sat, 21 Nov 2026 10:00:02 GMT' }),
      json(200, {}),
    ]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0);
    await vi.advanceTimersByTimeAsync(1999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await done).status).toBe(200);
  });

  it('uses exponential backoff with full jitter between attempts', async () => {
    const { attempt, sent } = scripted([json(500, {}), json(500, {}), json(500, {}), json(200, {})]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0.999);
    // ceilings 100, 200, 400 -> delays 99, 199, 399
    await vi.advanceTimersByTimeAsync(98);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(sent).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(399);
    expect((await done).status).toBe(200);
  });

  it('returns the last response when attempts run out', async () => {
    const { attempt, sent } = scripted([json(502, {}), json(503, {}), json(504, {}), json(500, {}), json(200, {})]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0);
    await vi.runAllTimersAsync();
    expect((await done).status).toBe(500);
    expect(sent).toHaveLength(4);
  });

  it('throws a network_error LoyaltyError when no attempt got a response', async () => {
    const cause = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    const { attempt } = scripted([cause, cause, cause, cause]);
    const done = sendWithRetry(post(), attempt, policy, 0, () => 0);
    const check = expect(done).rejects.toMatchObject({ name: 'LoyaltyError', status: 0, code: 'network_error', cause });
    await vi.runAllTimersAsync();
    await check;
    await expect(done).rejects.toThrow(/ECONNREFUSED/);
  });

  it('tells onRetry of each retry with its wait, and makes the outcome final when it says no', async () => {
    const cause = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    const notices: unknown[] = [];
    const { attempt, sent } = scripted([json(503, {}), cause, cause]);
    const done = sendWithRetry(
      post(),
      attempt,
      {
        ...policy,
        onRetry: (notice) => {
          notices.push(notice);
          return notices.length < 2;
        },
      },
      0,
      () => 0.5,
    );
    const check = expect(done).rejects.toMatchObject({ code: 'network_error', cause });
    await vi.runAllTimersAsync();
    await check;
    expect(sent).toHaveLength(2);
    expect(notices).toEqual([
      { method: 'POST', url: 'http://api.test/members', attempt: 1, maxAttempts: 4, delayMs: 50, status: 503 },
      {
        method: 'POST',
        url: 'http://api.test/members',
        attempt: 2,
        maxAttempts: 4,
        delayMs: 100,
        error: expect.objectContaining({ code: 'network_error', cause }),
      },
    ]);
  });

  it('does not retry again what a retried call inside an attempt gave up on (a token request)', async () => {
    const cause = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    const inner = scripted([cause, cause, cause, cause, cause, cause, cause, cause]);
    let outerAttempts = 0;
    const outer: Attempt = async () => {
      outerAttempts += 1;
      await sendWithRetry(post(), inner.attempt, policy, 0, () => 0);
      throw new Error('not reached');
    };
    const done = sendWithRetry(post(), outer, policy, 0, () => 0);
    const check = expect(done).rejects.toMatchObject({ code: 'network_error', cause });
    await vi.runAllTimersAsync();
    await check;
    expect(outerAttempts).toBe(1);
    expect(inner.sent).toHaveLength(4);
  });

  it('does not retry when retries are off', async () => {
    const { attempt, sent } = scripted([json(503, {}), json(200, {})]);
    expect((await sendWithRetry(post(), attempt, false, 0)).status).toBe(503);
    expect(sent).toHaveLength(1);
  });

  it('stops retrying at the deadline and returns the last response', async () => {
    const { attempt, sent } = scripted([json(429, {}, { 'retry-after': '30' }), json(200, {})]);
    const response = await sendWithRetry(post(), attempt, { ...policy, deadlineMs: 20_000 }, 0);
    expect(response.status).toBe(429);
    expect(sent).toHaveLength(1);
  });

  it('gives each attempt only what is left of the deadline', async () => {
    const seen: number[] = [];
    const attempt: Attempt = async (ctx) => {
      seen.push(ctx.timeoutMs);
      await new Promise((r) => setTimeout(r, 3000));
      return json(503, {}, { 'retry-after': '1' });
    };
    const done = sendWithRetry(post(), attempt, { ...policy, deadlineMs: 9000 }, 5000);
    await vi.runAllTimersAsync();
    await done;
    expect(seen).toEqual([5000, 5000, 1000]);
  });

  it('starts no retry after the time an attempt set as sendBy (its credentials expire), whatever the deadline', async () => {
    let calls = 0;
    const attempt: Attempt = async (ctx) => {
      calls++;
      ctx.sendBy = Date.now() + 1500;
      return json(503, {}, { 'retry-after': calls === 1 ? '1' : '2' });
    };
    const done = sendWithRetry(post(), attempt, policy, 0);
    await vi.runAllTimersAsync();
    expect((await done).status).toBe(503);
    expect(calls).toBe(2); // a retry 1 s later is before sendBy; one 2 s later is not
  });

  it('does not count time reported as waited (pacing) against the deadline', async () => {
    let calls = 0;
    const attempt: Attempt = async (ctx) => {
      calls++;
      await new Promise((r) => setTimeout(r, 50_000));
      ctx.waited(50_000);
      return json(503, {});
    };
    const done = sendWithRetry(post(), attempt, { ...policy, deadlineMs: 1000 }, 0, () => 0);
    await vi.runAllTimersAsync();
    expect((await done).status).toBe(503);
    expect(calls).toBe(4);
  });

  it('stops waiting at once when the caller aborts', async () => {
    const controller = new AbortController();
    const { attempt, sent } = scripted([json(503, {}, { 'retry-after': '5' }), json(200, {})]);
    const done = sendWithRetry(post({ signal: controller.signal }), attempt, policy, 0);
    const check = expect(done).rejects.toThrow('caller gave up');
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(new Error('caller gave up'));
    await check;
    expect(sent).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rethrows the caller abort from an attempt without retrying', async () => {
    const controller = new AbortController();
    const attempt: Attempt = async (ctx) => {
      controller.abort(new DOMException('stop', 'AbortError'));
      throw ctx.signal.reason;
    };
    await expect(sendWithRetry(post({ signal: controller.signal }), attempt, policy, 0)).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});

describe('fetchWithTimeout', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const hanging = (request: Request) =>
    new Promise<Response>((_resolve, reject) =>
      request.signal.addEventListener('abort', () => reject(request.signal.reason)),
    );

  it('aborts the attempt with a timeout LoyaltyError', async () => {
    const done = fetchWithTimeout(
      (signal) => hanging(new Request('http://api.test/tags', { signal })),
      new AbortController().signal,
      1000,
    );
    const check = expect(done).rejects.toMatchObject({ code: 'timeout', status: 0 });
    await vi.advanceTimersByTimeAsync(1000);
    await check;
    expect((await done.catch((e) => e)) instanceof LoyaltyError).toBe(true);
  });

  it('lets the caller signal through and clears its timer', async () => {
    const controller = new AbortController();
    const done = fetchWithTimeout(
      (signal) => hanging(new Request('http://api.test/tags', { signal })),
      controller.signal,
      1000,
    );
    controller.abort(new Error('mine'));
    await expect(done).rejects.toThrow('mine');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('retries a timed-out attempt and reports timeout when all time out', async () => {
    const attempt: Attempt = (ctx) =>
      fetchWithTimeout(
        (signal) => ctx.send((input, init) => hanging(new Request(input, init)), signal),
        ctx.signal,
        ctx.timeoutMs,
      );
    const done = sendWithRetry(post(), attempt, { ...policy, maxAttempts: 2 }, 1000, () => 0);
    const check = expect(done).rejects.toMatchObject({ code: 'timeout' });
    await vi.runAllTimersAsync();
    await check;
  });
});
