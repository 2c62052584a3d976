import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLoyaltyClient, type LoyaltyClient } from '../client.js';
import { LoyaltyError } from '../errors.js';
import { api, fast, mswServer, tokens } from '../test-support.js';
import { isLeanInit } from './lean-call.js';

const server = mswServer();
afterEach(() => vi.restoreAllMocks());
const token = tokens('lean');
/** Any call, typed loosely: the cases below go beyond what the generated types allow. */
type Loose = (
  url: string,
  init?: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
const loose = (client: LoyaltyClient, method: string) => (client as unknown as Record<string, Loose>)[method]!;

/** What the server saw, less what differs by design between two clients (token, random key). */
interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  hasKey: boolean;
  idShape: boolean;
  body: string;
}

/** Answers by the `reply` query parameter, so one handler serves every case. */
function echoServer(seen: Seen[]) {
  const answer = async ({ request }: { request: Request }) => {
    // Random per call: compared by shape (request-id.test.ts checks the values).
    const headers = Object.fromEntries(
      [...request.headers].filter(([k]) => k !== 'authorization' && k !== 'idempotency-key' && k !== 'x-request-id'),
    );
    const idShape = /^[0-9a-f-]{36}-1$/.test(request.headers.get('x-request-id') ?? '');
    seen.push({
      method: request.method,
      url: request.url,
      headers,
      hasKey: request.headers.has('idempotency-key'),
      idShape,
      body: await request.text(),
    });
    const json = '{"success":true,"data":{"a":1}}';
    switch (new URL(request.url).searchParams.get('reply')) {
      case 'sized':
        return new HttpResponse(json, {
          headers: { 'content-type': 'application/json', 'content-length': String(json.length) },
        });
      case 'no-content':
        return new HttpResponse(null, { status: 204 });
      case 'zero':
        return new HttpResponse(null, { status: 200, headers: { 'content-length': '0' } });
      case 'empty':
        return new HttpResponse('', { status: 200 });
      case 'not-found':
        return HttpResponse.json({ message: 'Not found.', error: 'not_found' }, { status: 404 });
      case 'text-error':
        return new HttpResponse('plain failure', { status: 422 });
      case 'empty-error':
        return new HttpResponse(null, { status: 409, headers: { 'content-length': '0' } });
      default:
        return new HttpResponse(json, { headers: { 'content-type': 'application/json' } });
    }
  };
  server.use(http.all(`${api}/*`, answer));
}

async function settle(promise: Promise<{ data?: unknown; error?: unknown; response: Response }>, parseAs?: unknown) {
  try {
    const { data, error, response } = await promise;
    let body = data;
    if (parseAs === 'stream' && data) body = await new Response(data as ReadableStream).text();
    if (parseAs === 'arrayBuffer' && data) body = [...new Uint8Array(data as ArrayBuffer)];
    if (parseAs === 'blob' && data) body = await (data as Blob).text();
    return { data: body, error, hasData: 'data' in (await promise), status: response.status };
  } catch (e) {
    return { rejected: e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e) };
  }
}

const cases: [method: string, path: string, init?: Record<string, unknown>][] = [
  ['GET', '/tags'],
  ['GET', '/tags', { params: { query: { reply: 'sized' } } }],
  ['GET', '/tags', { params: { query: { reply: 'no-content' } } }],
  ['GET', '/tags', { params: { query: { reply: 'zero' } } }],
  ['GET', '/tags', { params: { query: { reply: 'empty' } } }],
  ['GET', '/tags', { params: { query: { reply: 'not-found' } } }],
  ['GET', '/tags', { params: { query: { reply: 'text-error' } } }],
  ['GET', '/tags', { params: { query: { reply: 'empty-error' } } }],
  [
    'GET',
    '/tags/members',
    {
      params: {
        query: {
          tag_id: 'a b&c/é?',
          brand_id: 'x',
          per_page: 5,
          skip: undefined,
          none: null,
          list: ['a', 'b c'],
          empty: [],
          obj: { x: '1', y: 'z w' },
        },
      },
    },
  ],
  ['GET', '/members/{uuid}/coupons', { params: { path: { uuid: 'a/b c' }, query: { brand_id: 'b' } } }],
  ['GET', '/members/{uuid}/coupons', { params: { path: {} } }],
  ['GET', '/members/{uuid}/coupons', { params: {} }],
  ['GET', '/tags', { params: { query: { reply: 'sized' } }, parseAs: 'text' }],
  ['GET', '/tags', { params: { query: { reply: 'sized' } }, parseAs: 'arrayBuffer' }],
  ['GET', '/tags', { params: { query: { reply: 'sized' } }, parseAs: 'blob' }],
  ['GET', '/tags', { parseAs: 'stream' }],
  ['GET', '/tags', { headers: { 'X-Trace': ' abc ', Accept: 'text/plain' } }],
  ['GET', '/tags', { headers: new Headers({ 'x-trace': 'h' }), params: { header: { 'x-more': ['1', '2'] } } }],
  ['GET', '/tags', { headers: { accept: null } }],
  ['GET', '/tags', { body: { a: 1 } }],
  ['GET', '/tags', { headers: { 'x-bad': 'a\nb' } }],
  ['GET', '/tags', { middleware: [] }],
  ['POST', '/tags', { body: { tag: 'VIP', brand_id: 'b' } }],
  [
    'POST',
    '/tags',
    { body: { tag: 'VIP' }, headers: { 'Idempotency-Key': 'mine', 'Content-Type': 'application/vnd.api+json' } },
  ],
  ['POST', '/tags', { body: { tag: 'VIP' }, headers: { 'content-type': null } }],
  ['POST', '/tags', { body: { tag: 'VIP', n: '2' }, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }],
  ['POST', '/tags', { body: 'a string' }],
  ['POST', '/tags', { body: null }],
  ['POST', '/tags', { body: () => 1 }],
  ['POST', '/tags', { body: { n: 1n } }],
  ['POST', '/oauth/token', { body: { grant_type: 'client_credentials' } }],
  ['POST', '/tags', { body: { tag: 'VIP' }, params: { query: { reply: 'not-found' } } }],
  ['PUT', '/bulk/members', { body: { members: [] }, params: { query: { reply: 'sized' } } }],
  ['PATCH', '/tags/{id}', { params: { path: { id: 7 } }, body: {} }],
  ['DELETE', '/members/{uuid}', { params: { path: { uuid: 'u1' }, query: { brand_id: 'b' } } }],
  ['DELETE', '/members/{uuid}', { params: { path: { uuid: 'u1' } }, body: { brand_id: 'b' } }],
];

describe('calls without middleware (lean path)', () => {
  it.each(cases)(
    '%s %s (case %#): the same request and result as through openapi-fetch',
    async (method, path, init) => {
      const seen: Seen[] = [];
      echoServer(seen);
      const fetchSpy = vi.spyOn(globalThis, 'fetch');
      const lean = createLoyaltyClient({ baseUrl: api, token: token(), retry: false });
      const viaOpenapiFetch = createLoyaltyClient({ baseUrl: api, token: token(), retry: false });
      viaOpenapiFetch.use({ onRequest: () => undefined });

      const leanResult = await settle(loose(lean, method)(path, init), init?.parseAs);
      const leanInputs = fetchSpy.mock.calls.map(([input]) => typeof input);
      const leanSeen = seen.splice(0);
      const otherResult = await settle(loose(viaOpenapiFetch, method)(path, init), init?.parseAs);
      expect(leanResult).toEqual(otherResult);
      expect(leanSeen).toEqual(seen);
      // The lean path hands fetch a URL, openapi-fetch's path a Request.
      expect(leanInputs.every((t) => t === 'string')).toBe(true);
      if (seen.length) expect(typeof fetchSpy.mock.calls.at(-1)![0]).toBe('object');
    },
  );

  it('leaves any other option, or a call with its own middleware, to openapi-fetch', () => {
    expect(isLeanInit(undefined)).toBe(true);
    expect(
      isLeanInit({
        params: {},
        headers: {},
        body: {},
        signal: new AbortController().signal,
        parseAs: 'text',
        middleware: [],
      }),
    ).toBe(true);
    for (const init of [
      null,
      'x',
      { params: null },
      { cache: 'no-store' },
      { baseUrl: api },
      { querySerializer: () => '' },
      { body: new FormData() },
      { signal: {} },
      { middleware: [{}] },
      { method: 'PUT' },
    ])
      expect(isLeanInit(init)).toBe(false);
  });

  it('resends the same body and Idempotency-Key on each retry', async () => {
    const seen: { key: string | null; body: string }[] = [];
    server.use(
      http.post(`${api}/tags`, async ({ request }) => {
        seen.push({ key: request.headers.get('idempotency-key'), body: await request.text() });
        return seen.length < 3
          ? HttpResponse.json({ message: 'busy' }, { status: 503 })
          : HttpResponse.json({ success: true }, { status: 201 });
      }),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const { response } = await client.POST('/tags', { body: { tag: 'VIP', brand_id: 'b', external_reference: 'r' } });
    expect(response.status).toBe(201);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.map((s) => s.body)).toEqual(Array(3).fill('{"tag":"VIP","brand_id":"b","external_reference":"r"}'));
  });

  it('rejects with a timeout LoyaltyError when no attempt answers in time, aborting each', async () => {
    let aborted = 0;
    server.use(
      http.get(`${api}/tags`, async ({ request }) => {
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
        aborted++;
        return HttpResponse.json({});
      }),
    );
    const client = createLoyaltyClient({
      baseUrl: api,
      token: token(),
      timeoutMs: 20,
      retry: { ...fast, maxAttempts: 2 },
    });
    const error = await client.GET('/tags').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoyaltyError);
    expect(error).toMatchObject({ status: 0, code: 'timeout' });
    await vi.waitFor(() => expect(aborted).toBe(2));
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

  it('switches to openapi-fetch while middleware is registered, and back after eject()', async () => {
    server.use(http.get(`${api}/tags`, () => HttpResponse.json({ success: true, data: [] })));
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const client = createLoyaltyClient({ baseUrl: api, token: token() });
    const middleware = { onRequest: () => undefined };
    await client.GET('/tags');
    client.use(middleware);
    await client.GET('/tags');
    await client.request('get', '/tags');
    client.eject(middleware);
    await client.GET('/tags');
    await client.request('get', '/tags');
    expect(fetchSpy.mock.calls.map(([input]) => (input instanceof Request ? 'Request' : typeof input))).toEqual([
      'string',
      'Request',
      'Request',
      'string',
      'string',
    ]);
  });
});
