import { describe, expect, it, vi } from 'vitest';
import { createLoyaltyClient, type LoyaltyClientOptions } from './client.js';
import { isLoyaltyError, toLoyaltyError } from './errors.js';
import type { ClientHooks, Logger, RequestHookInfo, ResponseHookInfo, RetryHookInfo } from './index.js';
import { mswServer, tokens } from './test-support.js';
import { mockLoyaltyApi } from './testing.js';

const baseUrl = 'http://hooks.test';
const server = mswServer();
const token = tokens('hooks');
const fast = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2, deadlineMs: 5000 };
const tagBody = { brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP' };

function setup(options: Partial<LoyaltyClientOptions> = {}) {
  const api = mockLoyaltyApi({ baseUrl });
  server.use(...api.handlers);
  const t = token();
  const client = createLoyaltyClient({ baseUrl, token: t, retry: fast, ...options } as LoyaltyClientOptions);
  return { api, client, token: t };
}

/** Hooks that record what they are told, in order. */
function recorder() {
  const seen: Array<['request', RequestHookInfo] | ['response', ResponseHookInfo] | ['retry', RetryHookInfo]> = [];
  const hooks: ClientHooks = {
    onRequest: (info) => seen.push(['request', info]),
    onResponse: (info) => seen.push(['response', info]),
    onRetry: (info) => seen.push(['retry', info]),
  };
  return { seen, hooks };
}

const fakeLogger = (): Logger & { lines: string[] } => {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (message: string): void => {
      lines.push(`${level} ${message}`);
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
};

describe('per-call options override the client’s', () => {
  it('retry: { maxAttempts: 1 } makes one attempt where the client would make four', async () => {
    const { api, client } = setup();
    api.fail({ with: 'server_error', times: 3 });
    const once = await client.GET('/tags', { retry: { maxAttempts: 1 } });
    expect(once.response.status).toBe(503);
    expect(api.requests).toHaveLength(1);
    expect((await client.GET('/tags')).response.status).toBe(200); // the client's 4 attempts ride out the rest
    expect(api.requests.map((r) => r.status)).toEqual([503, 503, 503, 200]);
  });

  it('retry: false is one attempt; a call may retry when the client does not', async () => {
    const { api, client } = setup({ retry: false });
    api.fail({ with: 'server_error', times: 2 });
    const retried = await client.GET('/tags', { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 } });
    expect(retried.response.status).toBe(200);
    expect(api.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    const other = setup();
    other.api.fail({ with: 'server_error', times: 1 });
    expect((await other.client.GET('/tags', { retry: false })).response.status).toBe(503);
  });

  it('timeoutMs cuts this call’s attempt short, the client’s 30 s notwithstanding', async () => {
    const { api, client } = setup();
    api.fail({ with: 'timeout', delayMs: 3000, path: '/tags' });
    const started = Date.now();
    const error = await client.GET('/tags', { timeoutMs: 100, retry: false }).catch((e: unknown) => e);
    expect(isLoyaltyError(error) && error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('signal aborts this call', async () => {
    const { api, client } = setup();
    api.fail({ with: 'timeout', delayMs: 3000, path: '/tags' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 30);
    await expect(client.GET('/tags', { signal: controller.signal })).rejects.toThrow('user left');
  });
});

describe('hooks', () => {
  it('see each request, response and retry: attempt, times, request id, replay; the call’s after the client’s', async () => {
    const client = recorder();
    const call = recorder();
    const order: string[] = [];
    const tagged = (name: string, hooks: ClientHooks): ClientHooks => ({
      ...hooks,
      onResponse: (info) => {
        order.push(name);
        return hooks.onResponse?.(info);
      },
    });
    const {
      api,
      client: sdk,
      token: t,
    } = setup({
      hooks: tagged('client', client.hooks),
    });
    api.fail({ with: 'in_progress', method: 'POST', path: '/tags' });
    const result = await sdk.POST('/tags', {
      body: tagBody,
      hooks: tagged('call', call.hooks),
    });
    expect(result.response.status).toBe(201);
    expect(order).toEqual(['client', 'call', 'client', 'call']);
    expect(call.seen).toEqual(client.seen);
    expect(client.seen.map(([kind, info]) => [kind, info.attempt, 'status' in info ? info.status : undefined])).toEqual(
      [
        ['request', 1, undefined],
        ['response', 1, 409],
        ['retry', 1, 409],
        ['request', 2, undefined],
        ['response', 2, 201],
      ],
    );
    const [first, , retry, , last] = client.seen.map(([, info]) => info);
    expect(first).toMatchObject({ method: 'POST', path: '/tags', pacingWaitMs: expect.any(Number) });
    expect(first?.requestId).toMatch(/^[0-9a-f-]{36}-1$/);
    expect(last?.requestId).toBe(first?.requestId.replace(/-1$/, '-2'));
    expect(last).toMatchObject({ status: 201, replayed: true });
    expect((retry as RetryHookInfo).delayMs).toEqual(expect.any(Number));
    expect(last?.elapsedMs).toBeGreaterThanOrEqual(first?.elapsedMs ?? 0);
    // Never a header or a secret: only the facts listed.
    const everything = JSON.stringify(client.seen);
    expect(everything).not.toContain(t);
    expect(everything.toLowerCase()).not.toContain('authorization');
    expect(Object.keys(last ?? {}).sort()).toEqual(
      ['attempt', 'elapsedMs', 'method', 'path', 'pacingWaitMs', 'replayed', 'requestId', 'status'].sort(),
    );
  });

  it('tell a request that got no response: status 0 and why', async () => {
    const { seen, hooks } = recorder();
    const { api, client } = setup({ hooks });
    api.fail({ with: 'network_reset', times: 1, path: '/tags' });
    expect((await client.GET('/tags')).response.status).toBe(200);
    const responses = seen.filter(([kind]) => kind === 'response').map(([, info]) => info as ResponseHookInfo);
    expect(responses.map((r) => [r.status, r.error])).toEqual([
      [0, 'network_error'],
      [200, undefined],
    ]);
  });

  it('the path has no query string (where e-mails would be)', async () => {
    const { seen, hooks } = recorder();
    const { client } = setup({ hooks });
    await client.GET('/members', { params: { query: { brand_id: 'brand-acme', email: 'ann@example.com' } } });
    expect(seen[0]?.[1].path).toBe('/members');
    expect(JSON.stringify(seen)).not.toContain('ann@example.com');
  });

  it('a hook that throws, or rejects, does not break the call; the logger is told', async () => {
    const logger = fakeLogger();
    const { client } = setup({
      logger,
      hooks: {
        onRequest: () => {
          throw new Error('bug in a hook');
        },
        onResponse: async () => Promise.reject(new Error('async bug')),
      },
    });
    const result = await client.GET('/tags');
    expect(result.response.status).toBe(200);
    await vi.waitFor(() => expect(logger.lines).toHaveLength(2));
    expect(logger.lines).toEqual([
      'warn loyalty: the onRequest hook threw; the call goes on',
      'warn loyalty: the onResponse hook threw; the call goes on',
    ]);
  });
});

describe('logger and logLevel', () => {
  it('debug logs each request and response; info each retry; error a call that failed', async () => {
    const logger = fakeLogger();
    const { api, client } = setup({ logger, logLevel: 'debug' });
    api.fail({ with: 'server_error', times: 1 });
    await client.GET('/tags');
    expect(logger.lines.map((line) => line.replace(/request id [^)]+/, 'request id …'))).toEqual([
      'debug loyalty: → GET /tags attempt 1 (request id …)',
      expect.stringMatching(/^debug loyalty: ← 503 GET \/tags attempt 1 \(request id …\) after \d+ ms$/),
      expect.stringMatching(/^info loyalty: GET \/tags attempt 1 \(request id …\) got 503; retrying in \d+ ms$/),
      'debug loyalty: → GET /tags attempt 2 (request id …)',
      expect.stringMatching(/^debug loyalty: ← 200 GET \/tags attempt 2/),
    ]);
  });

  it('the default level (warn) logs no request; error logs a call that ended in a 5xx', async () => {
    const logger = fakeLogger();
    const { api, client } = setup({ logger, retry: { ...fast, maxAttempts: 2 } });
    await client.GET('/tags');
    expect(logger.lines).toEqual([]);
    api.fail({ with: 'server_error', times: 2, status: 503 });
    const failed = await client.GET('/tags');
    expect(toLoyaltyError(failed)?.status).toBe(503);
    expect(logger.lines).toEqual([
      expect.stringMatching(/^error loyalty: GET \/tags failed with 503 \(request id .+-2\)$/),
    ]);
  });
});
