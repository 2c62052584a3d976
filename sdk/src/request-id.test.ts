import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from './client.js';
import { LoyaltyError, toLoyaltyError, unwrap } from './errors.js';
import { requestIdOf } from './index.js';
import { api, fast, mswServer, tokens } from './test-support.js';
import { mockLoyaltyApi } from './testing.js';

const server = mswServer();
const token = tokens('rid');
const generated = /^([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})-(\d+)$/;
const tags = { success: true, data: [] };

/** Records the X-Request-Id of every request; answers from `reply` (default 200), echoing the id like the server. */
function recording(reply: (attempt: number, id: string | null) => Response | undefined = () => undefined) {
  const ids: (string | null)[] = [];
  server.use(
    http.all(`${api}/*`, ({ request }) => {
      const id = request.headers.get('x-request-id');
      ids.push(id);
      const response = reply(ids.length, id) ?? HttpResponse.json(tags);
      if (id && response.type !== 'error' && !response.headers.has('x-request-id'))
        response.headers.set('x-request-id', id);
      return response;
    }),
  );
  return ids;
}

describe('X-Request-Id on every request', () => {
  it('sends <uuid>-<n>: one UUID per call, n counting its attempts from 1', async () => {
    const ids = recording((attempt) =>
      attempt < 3 ? HttpResponse.json({ message: 'Server Error' }, { status: 503 }) : undefined,
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const result = await client.GET('/tags');
    expect(result.response.status).toBe(200);
    expect(ids).toHaveLength(3);
    const [first, second, third] = ids.map((id) => generated.exec(id ?? ''));
    expect(first?.[2]).toBe('1');
    expect(second?.[2]).toBe('2');
    expect(third?.[2]).toBe('3');
    expect(new Set([first?.[1], second?.[1], third?.[1]]).size).toBe(1);
    expect(new Set(ids).size).toBe(3);
    // The answer's id: the last attempt's.
    expect(requestIdOf(result)).toBe(ids[2]);
    expect(requestIdOf(result.response)).toBe(ids[2]);
  });

  it('uses a new UUID for every call (GET, POST, with its own or a registered middleware)', async () => {
    const ids = recording();
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    await client.GET('/tags');
    await client.POST('/tags', { body: { tag: 'VIP', external_reference: 'vip', brand_id: 'brand-acme' } });
    await client.GET('/tags', { middleware: [{ onRequest: () => undefined }] });
    client.use({ onRequest: () => undefined });
    await client.GET('/tags');
    expect(ids).toHaveLength(4);
    for (const id of ids) expect(id).toMatch(generated);
    expect(new Set(ids.map((id) => generated.exec(id!)![1])).size).toBe(4);
  });

  it('keeps a caller’s X-Request-Id, unchanged on every attempt', async () => {
    const ids = recording((attempt) =>
      attempt < 2 ? HttpResponse.json({ message: 'Server Error' }, { status: 502 }) : undefined,
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const result = await client.GET('/tags', { headers: { 'X-Request-Id': 'order-4711' } });
    expect(ids).toEqual(['order-4711', 'order-4711']);
    expect(requestIdOf(result)).toBe('order-4711');
    const viaParams = await client.GET('/tags', { params: { header: { 'x-request-id': 'batch:7' } } as never });
    expect(ids[2]).toBe('batch:7');
    expect(requestIdOf(viaParams)).toBe('batch:7');
  });

  it('numbers the token request and the resend after a renewed token too', async () => {
    const ids: string[] = [];
    let tokens = 0;
    server.use(
      http.post(`${api}/oauth/token`, ({ request }) => {
        ids.push(`token ${request.headers.get('x-request-id')}`);
        return HttpResponse.json({ token_type: 'Bearer', access_token: `t${++tokens}`, expires_in: 3600 });
      }),
      http.get(`${api}/tags`, ({ request }) => {
        ids.push(`tags ${request.headers.get('x-request-id')}`);
        return request.headers.get('authorization') === 'Bearer t1'
          ? HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 })
          : HttpResponse.json(tags);
      }),
    );
    const client = createLoyaltyClient({
      baseUrl: api,
      clientCredentials: { clientId: `c${token()}`, clientSecret: 's' },
      retry: fast,
    });
    expect((await client.GET('/tags')).response.status).toBe(200);
    expect(ids).toHaveLength(4);
    expect(ids[0]).toMatch(/^token [0-9a-f-]{36}-1$/);
    expect(ids[1]).toMatch(/^tags [0-9a-f-]{36}-1$/);
    expect(ids[2]).toMatch(/^token [0-9a-f-]{36}-1$/);
    expect(ids[3]).toBe(`${ids[1]!.slice(0, -2)}-2`);
  });
});

describe('requestId of errors and results', () => {
  it('is the server’s X-Request-Id answer', async () => {
    recording(() =>
      HttpResponse.json(
        { message: 'Member not found', error: 'not_found' },
        { status: 404, headers: { 'x-request-id': 'server-made' } },
      ),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: fast });
    const result = await client.GET('/members/{uuid}', { params: { path: { uuid: 'u1' }, query: { brand_id: 'b' } } });
    const error = toLoyaltyError(result);
    expect(error).toBeInstanceOf(LoyaltyError);
    expect(error?.requestId).toBe('server-made');
    expect(requestIdOf(result)).toBe('server-made');
    let thrown: unknown;
    try {
      unwrap(result);
    } catch (e) {
      thrown = e;
    }
    expect((thrown as LoyaltyError).requestId).toBe('server-made');
  });

  it('falls back to the body’s request_id, then to the id sent', async () => {
    server.use(
      http.get(`${api}/tags`, () =>
        HttpResponse.json(
          { message: 'Internal Server Error', error: 'server_error', request_id: 'from-body' },
          { status: 500 },
        ),
      ),
      http.get(`${api}/members/:uuid`, () =>
        HttpResponse.json({ message: 'Member not found', error: 'not_found' }, { status: 404 }),
      ),
    );
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: false });
    expect(toLoyaltyError(await client.GET('/tags'))?.requestId).toBe('from-body');
    const notFound = await client.GET('/members/{uuid}', {
      params: { path: { uuid: 'u1' }, query: { brand_id: 'b' } },
    });
    const sent = toLoyaltyError(notFound)?.requestId;
    expect(sent).toMatch(generated);
    expect(requestIdOf(notFound)).toBe(sent);
  });

  it('is the last attempt’s id on a thrown network_error or timeout', async () => {
    const ids = recording(() => HttpResponse.error());
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: { ...fast, maxAttempts: 2 } });
    const error = await client.GET('/tags').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LoyaltyError);
    expect((error as LoyaltyError).code).toBe('network_error');
    expect(ids).toHaveLength(2);
    expect((error as LoyaltyError).requestId).toBe(ids[1]);

    server.resetHandlers();
    const slowIds: (string | null)[] = [];
    server.use(
      http.get(`${api}/tags`, async ({ request }) => {
        slowIds.push(request.headers.get('x-request-id'));
        await new Promise((resolve) => setTimeout(resolve, 500));
        return HttpResponse.json(tags);
      }),
    );
    const slow = createLoyaltyClient({ baseUrl: api, token: token(), timeoutMs: 20, retry: false });
    const timeout = await slow.GET('/tags').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((timeout as LoyaltyError).code).toBe('timeout');
    expect((timeout as LoyaltyError).requestId).toBe(slowIds[0]);
  });

  it('works with the mock API of @loyalty/sdk/testing, which echoes ids like the server', async () => {
    const mock = mockLoyaltyApi();
    server.use(...mock.handlers);
    mock.fail({ with: 'server_error', times: 1, path: '/tags' });
    const client = createLoyaltyClient({
      baseUrl: 'http://localhost:3000',
      clientCredentials: { clientId: 'x', clientSecret: 'y' },
      retry: false,
    });
    const failed = toLoyaltyError(await client.GET('/tags'));
    expect(failed?.status).toBe(503);
    expect(failed?.requestId).toBe(mock.requests.at(-1)!.requestId);
    const ok = await client.GET('/tags', { headers: { 'x-request-id': 'mine' } });
    expect(requestIdOf(ok)).toBe('mine');
    expect(mock.requests.at(-1)).toMatchObject({ path: '/tags', status: 200, requestId: 'mine' });
    const unsafe = await client.GET('/tags', { headers: { 'x-request-id': 'no spaces allowed' } });
    expect(requestIdOf(unsafe)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
