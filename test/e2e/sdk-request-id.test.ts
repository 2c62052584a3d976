// End to end: the request ids the built `@loyalty/sdk` client sends come back from the real
// reference server, on a success (`requestIdOf(result)`) and on errors (`LoyaltyError.requestId`).
import { createLoyaltyClient, requestIdOf, toLoyaltyError } from '@loyalty/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
beforeAll(async () => {
  live = await startLiveServer({}, { worker: false });
});
afterAll(() => live?.close());

const acme = { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' };
const generated = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-\d+$/;

/** A client that records the X-Request-Id each request was sent with and the one the server answered. */
function recordedClient() {
  const wire: { path: string; sent: string | null; answered: string | null; status: number }[] = [];
  const client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: acme,
    fetch: async (request) => {
      const response = await fetch(request);
      wire.push({
        path: new URL(request.url).pathname,
        sent: request.headers.get('x-request-id'),
        answered: response.headers.get('x-request-id'),
        status: response.status,
      });
      return response;
    },
  });
  return { client, wire };
}

it('gets the id it sent back on a success', async () => {
  const { client, wire } = recordedClient();
  const result = await client.GET('/tags');
  expect(result.response.status).toBe(200);
  const call = wire.at(-1)!;
  expect(call.path).toBe('/tags');
  expect(call.sent).toMatch(generated);
  expect(call.answered).toBe(call.sent);
  expect(requestIdOf(result)).toBe(call.sent);
  // The token request had an id of its own.
  expect(wire[0]).toMatchObject({ path: '/oauth/token', status: 200 });
  expect(wire[0]!.answered).toBe(wire[0]!.sent);
  expect(wire[0]!.sent).not.toBe(call.sent);
});

it('gets the id it sent back on a 404 and a 422, as the error’s requestId', async () => {
  const { client, wire } = recordedClient();
  const missing = await client.GET('/members/{uuid}', {
    params: { path: { uuid: '00000000-0000-4000-8000-000000000000' }, query: { brand_id: 'brand-acme' } },
  });
  const notFound = toLoyaltyError(missing);
  expect(notFound?.status).toBe(404);
  expect(notFound?.requestId).toMatch(generated);
  expect(notFound?.requestId).toBe(wire.at(-1)!.sent);
  expect(wire.at(-1)!.answered).toBe(notFound?.requestId);

  const invalid = toLoyaltyError(
    await client.POST('/tags', { body: { brand_id: 'brand-acme', external_reference: '', tag: '' } }),
  );
  expect(invalid?.status).toBe(422);
  expect(invalid?.requestId).toBe(wire.at(-1)!.sent);
  expect(wire.at(-1)!.answered).toBe(invalid?.requestId);
});

it('keeps a caller’s own id, and gets the server’s own for an unsafe one', async () => {
  const { client, wire } = recordedClient();
  const own = await client.GET('/tags', { headers: { 'X-Request-Id': 'e2e-order-4711' } });
  expect(requestIdOf(own)).toBe('e2e-order-4711');
  const unsafe = await client.GET('/members/{uuid}', {
    params: { path: { uuid: '00000000-0000-4000-8000-000000000000' }, query: { brand_id: 'brand-acme' } },
    headers: { 'X-Request-Id': 'has spaces' },
  });
  const error = toLoyaltyError(unsafe);
  expect(wire.at(-1)!.sent).toBe('has spaces');
  expect(error?.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(error?.requestId).toBe(wire.at(-1)!.answered);
});
