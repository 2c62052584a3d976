import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLoyaltyClient } from './client.js';
import { toLoyaltyError } from './errors.js';
import { wasReplayed } from './idempotency.js';
import { api, fast, mswServer, tokens } from './test-support.js';

const server = mswServer();
afterEach(() => vi.useRealTimers());
const token = tokens('tok');

/** A `GET /tags` whose caller aborts after 20 ms rejects with the abort reason at once. */
async function expectCallerAbortStopsAtOnce() {
  const client = createLoyaltyClient({ baseUrl: api, token: token() });
  const controller = new AbortController();
  const started = Date.now();
  const call = client.GET('/tags', { signal: controller.signal });
  setTimeout(() => controller.abort(new Error('shutting down')), 20);
  await expect(call).rejects.toThrow('shutting down');
  expect(Date.now() - started).toBeLessThan(1000);
}

const tagBody = { tag: 'VIP', external_reference: 'vip', brand_id: 'brand-acme' };
const tag = {
  ...tagBody,
  uuid: '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f',
  created_at: '2026-11-21T10:15:30.000Z',
  updated_at: '2026-11-21T10:15:30.000Z',
};

describe('createLoyaltyClient', () => {
  it('sends the bearer token and Accept, and returns typed data', async () => {
    let seen: Headers | undefined;
    server.use(
      http.get(`${api}/tags`, ({ request }) => {
        seen = request.headers;
        return HttpResponse.json({ success: true, data: [tag] });
      }),
    );
    const t = token();
    const client = createLoyaltyClient({ baseUrl: `${api}/`, token: t, userAgent: 'acme-sync/1.0' });
    const { data, error } = await client.GET('/tags');
    expect(error).toBeUndefined();
    expect(data?.data[0]?.uuid).toBe(tag.uuid);
    expect(seen?.get('authorization')).toBe(`Bearer ${t}`);
    expect(seen?.get('accept')).toBe('application/json');
    expect(seen?.get('user-agent')).toBe('acme-sync/1.0');
    expect(seen?.has('idempotency-key')).toBe(false);
  });

  it('sends query parameters for GET endpoints whose spec shows a JSON body', async () => {
    let url: URL | undefined;
    server.use(
      http.get(`${api}/tags/members`, ({ request }) => {
        url = new URL(request.url);
        return HttpResponse.json({ success: true, data: [] });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token() });
    await client.GET('/tags/members', { params: { query: { tag_id: 'vip', brand_id: 'brand-acme' } } });
    expect(url?.searchParams.get('tag_id')).toBe('vip');
    expect(url?.searchParams.get('brand_id')).toBe('brand-acme');
  });

  it('gives every POST an Idempotency-Key that its retries reuse', async () => {
    const keys: (string | null)[] = [];
    const bodies: unknown[] = [];
    server.use(
      http.post(`${api}/tags`, async ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        bodies.push(await request.json());
        if (keys.length < 3) return HttpResponse.json({ message: 'down', error: 'server_error' }, { status: 503 });
        return HttpResponse.json({ success: true, data: tag }, { status: 201 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const { data, response } = await client.POST('/tags', { body: tagBody });
    expect(response.status).toBe(201);
    expect(data?.data.uuid).toBe(tag.uuid);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(1);
    expect(bodies).toEqual([tagBody, tagBody, tagBody]);
  });

  it('uses different keys for different calls, and keeps a key the caller set', async () => {
    const keys: (string | null)[] = [];
    server.use(
      http.put(`${api}/tags`, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return HttpResponse.json({ success: true, data: tag });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token() });
    const body = { tag_id: tag.uuid, tag: 'VIP' };
    await client.PUT('/tags', { body });
    await client.PUT('/tags', { body });
    await client.PUT('/tags', { body, headers: { 'Idempotency-Key': 'rename-vip-1' } });
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe('rename-vip-1');
  });

  it('retries 409 idempotency_in_progress, then reports the replayed result', async () => {
    let calls = 0;
    server.use(
      http.post(`${api}/tags`, () => {
        calls++;
        if (calls === 1)
          return HttpResponse.json(
            { message: 'A request with this key is still running.', error: 'idempotency_in_progress' },
            { status: 409, headers: { 'retry-after': '0' } },
          );
        return HttpResponse.json(
          { success: true, data: tag },
          { status: 201, headers: { 'idempotent-replayed': 'true' } },
        );
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const result = await client.POST('/tags', { body: tagBody });
    expect(calls).toBe(2);
    expect(result.response.status).toBe(201);
    expect(wasReplayed(result)).toBe(true);
    expect(wasReplayed(result.response)).toBe(true);
  });

  it('returns HTTP errors as values with a typed LoyaltyError, without retrying', async () => {
    let calls = 0;
    server.use(
      http.post(`${api}/tags`, () => {
        calls++;
        return HttpResponse.json(
          {
            message: 'The tag field is required.',
            error: 'validation_failed',
            errors: { tag: ['The tag field is required.'] },
          },
          { status: 422 },
        );
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const result = await client.POST('/tags', { body: { ...tagBody, tag: '' } });
    expect(calls).toBe(1);
    expect(result.data).toBeUndefined();
    const err = toLoyaltyError(result);
    expect(err).toMatchObject({
      status: 422,
      code: 'validation_failed',
      fields: { tag: ['The tag field is required.'] },
    });
  });

  it('throws a network_error LoyaltyError when every attempt fails to connect', async () => {
    let calls = 0;
    server.use(
      http.get(`${api}/tags`, () => {
        calls++;
        return HttpResponse.error();
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    await expect(client.GET('/tags')).rejects.toMatchObject({ name: 'LoyaltyError', code: 'network_error', status: 0 });
    expect(calls).toBe(4);
  });

  it('times out a hanging attempt, retries it, and throws a timeout LoyaltyError', async () => {
    let calls = 0;
    server.use(
      http.get(`${api}/tags`, async () => {
        calls++;
        await new Promise(() => {});
      }),
    );
    const client = createLoyaltyClient({
      baseUrl: api,
      token: token(),
      timeoutMs: 30,
      retry: { ...fast, maxAttempts: 2 },
    });
    await expect(client.GET('/tags')).rejects.toMatchObject({ code: 'timeout' });
    expect(calls).toBe(2);
  });

  it('makes one attempt when retry is false', async () => {
    let calls = 0;
    server.use(
      http.get(`${api}/tags`, () => {
        calls++;
        return HttpResponse.json({ message: 'x', error: 'server_error' }, { status: 500 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: false });
    expect((await client.GET('/tags')).response.status).toBe(500);
    expect(calls).toBe(1);
  });

  it('stops at once when the caller aborts during a Retry-After wait', async () => {
    server.use(
      http.get(`${api}/tags`, () =>
        HttpResponse.json({ message: 'Too Many Attempts.' }, { status: 429, headers: { 'retry-after': '30' } }),
      ),
    );
    await expectCallerAbortStopsAtOnce();
  });

  it('paces concurrent calls of every client sharing a token so none gets a 429', async () => {
    // 30 requests per 1 s window, fixed window starting at the first request.
    let windowStart = 0;
    let count = 0;
    let limited = 0;
    server.use(
      http.get(`${api}/tags`, () => {
        const now = Date.now();
        if (now >= windowStart + 1000) {
          windowStart = now;
          count = 0;
        }
        const headers = { 'x-ratelimit-limit': '30', 'ratelimit-policy': '"token";q=30;w=1' };
        if (count >= 30) {
          limited++;
          return HttpResponse.json(
            { message: 'Too Many Attempts.' },
            { status: 429, headers: { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': '1' } },
          );
        }
        count++;
        return HttpResponse.json(
          { success: true, data: [] },
          { headers: { ...headers, 'x-ratelimit-remaining': String(30 - count) } },
        );
      }),
    );
    const t = token();
    const a = createLoyaltyClient({ baseUrl: api, token: t });
    const b = createLoyaltyClient({ baseUrl: api, token: t });
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).GET('/tags')));
    expect(limited).toBe(0);
    expect(results.every((r) => r.response.status === 200)).toBe(true);
  }, 10_000);
});

describe('pacing.onWait', () => {
  it('says when calls start and stop waiting for the rate limit, and for how long', async () => {
    // 5 requests per 1 s window: the 6th to 8th wait for the next window.
    let count = 0;
    server.use(
      http.get(`${api}/tags`, () =>
        HttpResponse.json(
          { success: true, data: [] },
          {
            headers: {
              'x-ratelimit-limit': '5',
              'x-ratelimit-remaining': String(Math.max(0, 5 - ++count)),
              'ratelimit-policy': '"token";q=5;w=1',
            },
          },
        ),
      ),
    );
    const events: Array<{ waiting: boolean; waitedMs: number }> = [];
    const client = createLoyaltyClient({ baseUrl: api, token: token(), pacing: { onWait: (e) => events.push(e) } });
    for (let i = 0; i < 5; i++) await client.GET('/tags');
    expect(events).toEqual([]); // within the budget nobody waits
    await Promise.all(Array.from({ length: 3 }, () => client.GET('/tags')));
    const starts = events.filter((e) => e.waiting);
    const ends = events.filter((e) => !e.waiting);
    expect(starts).toHaveLength(3);
    expect(ends).toHaveLength(3);
    expect(Math.max(...ends.map((e) => e.waitedMs))).toBeGreaterThan(500); // the rest of the 1 s window
  }, 10_000);
});

describe('client credentials', () => {
  function tokenEndpoint(opts: { expiresIn?: number; status?: number } = {}) {
    const issued: unknown[] = [];
    const seenHeaders: Headers[] = [];
    server.use(
      http.post(`${api}/oauth/token`, async ({ request }) => {
        issued.push(await request.json());
        seenHeaders.push(request.headers);
        if (opts.status) return HttpResponse.json({ error: 'invalid_client' }, { status: opts.status });
        return HttpResponse.json({
          token_type: 'Bearer',
          access_token: `issued-${issued.length}`,
          expires_in: opts.expiresIn ?? 3600,
          scope: 'tags.get',
        });
      }),
    );
    return { issued, seenHeaders };
  }
  const clientId = tokens('acme-admin');
  const credentials = () => ({
    clientId: clientId(),
    clientSecret: 'acme-admin-secret',
    scope: ['tags.get', 'tags.store'],
  });

  it('fetches one token for many concurrent calls and sends it', async () => {
    const { issued, seenHeaders } = tokenEndpoint();
    const used: (string | null)[] = [];
    server.use(
      http.get(`${api}/tags`, ({ request }) => {
        used.push(request.headers.get('authorization'));
        return HttpResponse.json({ success: true, data: [] });
      }),
    );
    const creds = credentials();
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: creds });
    await Promise.all(Array.from({ length: 10 }, () => client.GET('/tags')));
    expect(issued).toEqual([
      {
        grant_type: 'client_credentials',
        client_id: creds.clientId,
        client_secret: 'acme-admin-secret',
        scope: 'tags.get tags.store',
      },
    ]);
    expect(seenHeaders[0]?.has('idempotency-key')).toBe(false);
    expect(new Set(used)).toEqual(new Set(['Bearer issued-1']));
  });

  /** A `GET /tags` that records the bearer token it was sent with. */
  function tagsList() {
    const used: (string | null)[] = [];
    server.use(
      http.get(`${api}/tags`, ({ request }) => {
        used.push(request.headers.get('authorization'));
        return HttpResponse.json({ success: true, data: [] });
      }),
    );
    return used;
  }

  it('renews the token while what is left of it still outlasts a call: the retry deadline plus a margin', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { issued } = tokenEndpoint({ expiresIn: 3600 });
    const used = tagsList();
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials() });
    await client.GET('/tags');
    vi.advanceTimersByTime(3600_000 - 91_000); // 91 s left: more than the 60 s deadline + 30 s
    await client.GET('/tags');
    expect(issued).toHaveLength(1);
    vi.advanceTimersByTime(2_000); // 89 s left: a call starting now could outlive it
    await client.GET('/tags');
    expect(issued).toHaveLength(2);
    expect(used).toEqual(['Bearer issued-1', 'Bearer issued-1', 'Bearer issued-2']);

    // A longer deadline renews earlier.
    const slow = createLoyaltyClient({
      baseUrl: api,
      clientCredentials: credentials(),
      retry: { deadlineMs: 300_000 },
    });
    await slow.GET('/tags');
    vi.advanceTimersByTime(3600_000 - 331_000);
    await slow.GET('/tags');
    expect(issued).toHaveLength(3);
    vi.advanceTimersByTime(2_000);
    await slow.GET('/tags');
    expect(issued).toHaveLength(4);
  });

  it('renews a token that lives less than a deadline plus the margin at half its lifetime', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { issued } = tokenEndpoint({ expiresIn: 60 });
    const used = tagsList();
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials() });
    await client.GET('/tags');
    vi.advanceTimersByTime(29_000);
    await client.GET('/tags');
    vi.advanceTimersByTime(2_000);
    await client.GET('/tags');
    expect(issued).toHaveLength(2);
    expect(used).toEqual(['Bearer issued-1', 'Bearer issued-1', 'Bearer issued-2']);
  });

  it('keeps the token of its first attempt for every retry, though another call renewed it meanwhile', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { issued } = tokenEndpoint({ expiresIn: 3600 });
    const usedByList = tagsList();
    const attempts: { authorization: string | null; key: string | null }[] = [];
    const client = createLoyaltyClient({
      baseUrl: api,
      clientCredentials: credentials(),
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    server.use(
      http.post(`${api}/tags`, async ({ request }) => {
        attempts.push({
          authorization: request.headers.get('authorization'),
          key: request.headers.get('idempotency-key'),
        });
        if (attempts.length > 1) return HttpResponse.json({ success: true, data: tag }, { status: 201 });
        // The action ran; while its answer is on the way, the token comes due for renewal and
        // another call renews it; then the answer is lost.
        vi.advanceTimersByTime(40_000);
        await client.GET('/tags');
        return HttpResponse.error();
      }),
    );
    await client.GET('/tags');
    usedByList.length = 0;
    vi.advanceTimersByTime(3600_000 - 95_000); // 95 s left when the call starts: enough for it
    const { response } = await client.POST('/tags', { body: tagBody });
    expect(response.status).toBe(201);
    expect(issued).toHaveLength(2);
    expect(usedByList).toEqual(['Bearer issued-2']);
    // Same token, same key: the server's key scope is the same, so it replays instead of running again.
    expect(attempts).toEqual([attempts[0], attempts[0]]);
    expect(attempts[0]).toEqual({ authorization: 'Bearer issued-1', key: expect.any(String) });
  });

  it('ends a call when its token would expire before the next retry, rather than retry under another token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { issued } = tokenEndpoint({ expiresIn: 60 });
    const attempts: (string | null)[] = [];
    server.use(
      http.post(`${api}/tags`, ({ request }) => {
        attempts.push(request.headers.get('authorization'));
        vi.advanceTimersByTime(59_500); // the answer is lost after most of the token's lifetime
        return HttpResponse.error();
      }),
    );
    const client = createLoyaltyClient({
      baseUrl: api,
      clientCredentials: credentials(),
      retry: { baseDelayMs: 1, maxDelayMs: 5, deadlineMs: 120_000 },
    });
    await expect(client.POST('/tags', { body: tagBody })).rejects.toMatchObject({ code: 'network_error' });
    expect(attempts).toEqual(['Bearer issued-1']);
    expect(issued).toHaveLength(1);
  });

  it('answers with the 401 when the token is refused after an attempt that may have run, instead of running it again under a new token', async () => {
    const { issued } = tokenEndpoint();
    const attempts: (string | null)[] = [];
    server.use(
      http.post(`${api}/tags`, ({ request }) => {
        attempts.push(request.headers.get('authorization'));
        if (attempts.length === 1) return HttpResponse.error(); // ran, or not: unknown
        return HttpResponse.json(
          { message: 'Unauthenticated.', error: 'unauthenticated' },
          { status: attempts.length === 2 ? 401 : 201 },
        );
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials(), retry: fast });
    const result = await client.POST('/tags', { body: tagBody });
    expect(toLoyaltyError(result)).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(attempts).toEqual(['Bearer issued-1', 'Bearer issued-1']);
    expect(issued).toHaveLength(1);
  });

  it('still takes a fresh token on a 401 when no earlier attempt can have run (429 before), and for calls without a key', async () => {
    const { issued } = tokenEndpoint();
    const attempts: string[] = [];
    const answer = (request: Request, ok: () => Response) => {
      const n = attempts.push(`${request.method} ${request.headers.get('authorization')}`);
      if (n === 1)
        return request.method === 'POST'
          ? HttpResponse.json({ message: 'Too Many Attempts.' }, { status: 429, headers: { 'retry-after': '0' } })
          : HttpResponse.error();
      if (n === 2) return HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 });
      return ok();
    };
    server.use(
      http.post(`${api}/tags`, ({ request }) =>
        answer(request, () => HttpResponse.json({ success: true, data: tag }, { status: 201 })),
      ),
      http.get(`${api}/tags`, ({ request }) => answer(request, () => HttpResponse.json({ success: true, data: [] }))),
    );
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials(), retry: fast });
    expect((await client.POST('/tags', { body: tagBody })).response.status).toBe(201);
    expect(attempts).toEqual(['POST Bearer issued-1', 'POST Bearer issued-1', 'POST Bearer issued-2']);
    attempts.length = 0;
    // A GET carries no key: after a lost answer, a 401 is answered with a fresh token as ever.
    expect((await client.GET('/tags')).response.status).toBe(200);
    expect(attempts).toEqual(['GET Bearer issued-2', 'GET Bearer issued-2', 'GET Bearer issued-3']);
    expect(issued).toHaveLength(3);
  });

  it('retries once with a fresh token after a 401', async () => {
    const { issued } = tokenEndpoint();
    const used: (string | null)[] = [];
    const bodies: unknown[] = [];
    server.use(
      http.post(`${api}/tags`, async ({ request }) => {
        used.push(request.headers.get('authorization'));
        bodies.push(await request.json());
        if (request.headers.get('authorization') === 'Bearer issued-1')
          return HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 });
        return HttpResponse.json({ success: true, data: tag }, { status: 201 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials() });
    const { response } = await client.POST('/tags', { body: tagBody });
    expect(response.status).toBe(201);
    expect(issued).toHaveLength(2);
    expect(used).toEqual(['Bearer issued-1', 'Bearer issued-2']);
    expect(bodies).toEqual([tagBody, tagBody]);
  });

  it('does not loop when the fresh token is refused too', async () => {
    const { issued } = tokenEndpoint();
    let calls = 0;
    server.use(
      http.get(`${api}/tags`, () => {
        calls++;
        return HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials() });
    const result = await client.GET('/tags');
    expect(toLoyaltyError(result)?.code).toBe('unauthenticated');
    expect(calls).toBe(2);
    expect(issued).toHaveLength(2);
  });

  it('returns a refused token request as the error value of the call', async () => {
    tokenEndpoint({ status: 401 });
    const client = createLoyaltyClient({ baseUrl: api, clientCredentials: credentials() });
    const result = await client.GET('/tags');
    expect(result.response.status).toBe(401);
    expect(toLoyaltyError(result)?.code).toBe('invalid_client');
  });

  it('requires a token or client credentials', () => {
    // @ts-expect-error neither token nor clientCredentials
    expect(() => createLoyaltyClient({ baseUrl: api })).toThrow(/token/);
  });
});

describe('middleware, signals and the Request of a call', () => {
  it('still gives middleware registered with use() a real Request, and stops after eject()', async () => {
    const seen: { header: string | null; idempotencyKey: string | null }[] = [];
    server.use(
      http.post(`${api}/tags`, ({ request }) => {
        seen.push({ header: request.headers.get('x-trace'), idempotencyKey: request.headers.get('idempotency-key') });
        return HttpResponse.json({ success: true, data: tag }, { status: 201 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token() });
    const requests: unknown[] = [];
    const middleware = {
      onRequest({ request }: { request: Request }) {
        requests.push(request);
        request.headers.set('x-trace', 'abc');
        return request;
      },
    };
    client.use(middleware);
    await client.POST('/tags', { body: tagBody });
    client.eject(middleware);
    await client.POST('/tags', { body: tagBody });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toBeInstanceOf(Request);
    expect(seen.map((s) => s.header)).toEqual(['abc', null]);
    expect(seen.every((s) => s.idempotencyKey !== null)).toBe(true);
  });

  it('resends the body of a Request that middleware replaced on every retry, with one key', async () => {
    const seen: { key: string | null; trace: string | null; body: unknown }[] = [];
    server.use(
      http.post(`${api}/tags`, async ({ request }) => {
        seen.push({
          key: request.headers.get('idempotency-key'),
          trace: request.headers.get('x-trace'),
          body: await request.json(),
        });
        return seen.length < 3
          ? HttpResponse.json({ message: 'busy', error: 'server_error' }, { status: 503 })
          : HttpResponse.json({ success: true, data: tag }, { status: 201 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    // The replacement's body is the original's stream, piped through (not a string).
    client.use({ onRequest: ({ request }) => new Request(request, { headers: { 'x-trace': 'global' } }) });
    const middleware = [
      {
        onRequest: ({ request }: { request: Request }) => {
          expect(request.headers.get('x-trace')).toBe('global');
          return new Request(request, { headers: { 'x-trace': 'own', 'content-type': 'application/json' } });
        },
      },
    ];
    const { response } = await client.POST('/tags', { body: tagBody, middleware });
    expect(response.status).toBe(201);
    expect(seen).toHaveLength(3);
    expect(seen.map((s) => s.body)).toEqual([tagBody, tagBody, tagBody]);
    expect(seen.map((s) => s.trace)).toEqual(['own', 'own', 'own']);
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
  });

  it('rejects with the reason of a signal aborted before the call, sending nothing', async () => {
    let calls = 0;
    server.use(
      http.get(`${api}/tags`, () => {
        calls++;
        return HttpResponse.json({});
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token() });
    const reason = new Error('already stopped');
    await expect(client.GET('/tags', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(calls).toBe(0);
  });

  it("gives a call's own middleware a real Request, and only that call's", async () => {
    let traced = 0;
    server.use(
      http.get(`${api}/tags`, ({ request }) => {
        if (request.headers.get('x-trace') === 'abc') traced++;
        return HttpResponse.json({ success: true, data: [] });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token() });
    const requests: unknown[] = [];
    const middleware = [
      {
        onRequest({ request }: { request: Request }) {
          requests.push(request);
          return new Request(request, { headers: { ...Object.fromEntries(request.headers), 'x-trace': 'abc' } });
        },
      },
    ];
    await Promise.all([
      client.GET('/tags', { middleware }),
      client.GET('/tags'),
      client.request('get', '/tags', { middleware }),
    ]);
    expect(requests).toHaveLength(2);
    for (const r of requests) expect(r).toBeInstanceOf(Request);
    expect(traced).toBe(2);
  });

  it("aborts the request in flight when the caller's signal aborts", async () => {
    let aborted = 0;
    server.use(
      http.get(`${api}/tags`, async ({ request }) => {
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
        aborted++;
        return HttpResponse.json({ success: true, data: [] });
      }),
    );
    await expectCallerAbortStopsAtOnce();
    await vi.waitFor(() => expect(aborted).toBe(1));
  });

  it('aborts the request in flight at its timeout, and resends the same body', async () => {
    const bodies: unknown[] = [];
    let aborted = 0;
    server.use(
      http.post(`${api}/tags`, async ({ request }) => {
        bodies.push(await request.json());
        if (bodies.length === 1) {
          await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
          aborted++;
        }
        return HttpResponse.json({ success: true, data: tag }, { status: 201 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), timeoutMs: 30, retry: fast });
    const { response } = await client.POST('/tags', { body: tagBody });
    expect(response.status).toBe(201);
    expect(bodies).toEqual([tagBody, tagBody]);
    await vi.waitFor(() => expect(aborted).toBe(1));
  });

  it('throws the TypeError a Request throws for a URL it cannot parse (not a retried network error)', async () => {
    const client = createLoyaltyClient({ baseUrl: 'not a url', token: token(), retry: fast });
    const error = await client.GET('/tags').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
  });
});
