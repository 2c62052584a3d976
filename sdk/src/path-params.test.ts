import { http, HttpResponse } from 'msw';
import type { Middleware } from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from './client.js';
import { api, mswServer, tokens } from './test-support.js';

const server = mswServer();
const token = tokens('path-params');

/** Every request the mock sees: its method and raw path (a dot segment would be resolved away already). */
function recordRequests(): string[] {
  const seen: string[] = [];
  server.use(
    http.all(`${api}/*`, ({ request }) => {
      seen.push(`${request.method} ${new URL(request.url).pathname}`);
      return HttpResponse.json({ success: false, message: 'Not found', error: 'not_found' }, { status: 404 });
    }),
  );
  return seen;
}

// `/members/..` is resolved by URL parsing to `/`, and `/members/%2E%2E` too (the WHATWG URL parser
// reads `%2e` as a dot in a path segment): the request would reach another route.
describe('path parameters that are dot segments', () => {
  const viaMiddleware: Middleware = { onRequest: () => undefined };
  const cases: [string, { middleware?: Middleware[] }][] = [
    ['a call without middleware', {}],
    ['a call with its own middleware (openapi-fetch builds the URL)', { middleware: [viaMiddleware] }],
  ];
  for (const [how, options] of cases)
    it(`are sent encoded, so ${how} reaches the route of its template`, async () => {
      const seen = recordRequests();
      const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: false });
      for (const uuid of ['..', '.']) {
        const { error, response } = await client.GET('/members/{uuid}', {
          params: { path: { uuid }, query: { brand_id: 'brand-acme' } },
          ...options,
        });
        expect(response.status).toBe(404);
        expect(error).toMatchObject({ error: 'not_found' });
      }
      await client.DELETE('/webhook-subscriptions/{id}', { params: { path: { id: '..' } }, ...options });
      await client.GET('/tags/{id}/vouchers/{job}', {
        params: { path: { id: '.', job: '..' }, query: { brand_id: 'brand-acme' } },
        ...options,
      });
      expect(seen).toEqual([
        'GET /members/%252E%252E',
        'GET /members/%252E',
        'DELETE /webhook-subscriptions/%252E%252E',
        'GET /tags/%252E/vouchers/%252E%252E',
      ]);
    });

  it('leaves every other value as openapi-fetch encodes it (dots inside a value, `/`, `%2e` itself)', async () => {
    const seen = recordRequests();
    const client = createLoyaltyClient({ baseUrl: api, token: token(), retry: false });
    for (const uuid of ['...', 'a..b', '../x', '.hidden', '%2e%2e', 'plain'])
      await client.GET('/members/{uuid}', { params: { path: { uuid }, query: { brand_id: 'b' } } });
    expect(seen).toEqual([
      'GET /members/...',
      'GET /members/a..b',
      'GET /members/..%2Fx',
      'GET /members/.hidden',
      'GET /members/%252e%252e',
      'GET /members/plain',
    ]);
  });
});
