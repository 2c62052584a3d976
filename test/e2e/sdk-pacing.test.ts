// End to end: rate-limit pacing of the built `@loyalty/sdk` against the real reference server with
// a small limit in a shortened window: many concurrent calls through one client, and no 429 on the wire.
import type { ResponseObject } from '@hapi/hapi';
import { createLoyaltyClient, toLoyaltyError } from '@loyalty/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const LIMIT = 60;
// Under the whole suite's load on CI's 2 cores, 1 to 10 calls of 200 met a 429 here: the server
// counted some requests in another order than it answered them, and the limiter's budget missed
// a request answered early but counted late (fixed in the SDK; rate-limit.test.ts has the exact
// sequence). Windows of 4 s rather than 2 keep the timing bounds below clear of that load.
const WINDOW_S = 4;
const CALLS = 200;

let live: LiveServer;
/** Status codes the server sent on GET /tags, counted server-side. */
const served = new Map<number, number>();

beforeAll(async () => {
  live = await startLiveServer({ rateLimitToken: LIMIT, rateLimitWindowSeconds: WINDOW_S }, { worker: false });
  live.server.events.on('response', (request) => {
    if (request.path !== '/tags') return;
    const status = (request.response as ResponseObject).statusCode;
    served.set(status, (served.get(status) ?? 0) + 1);
  });
});
afterAll(() => live?.close());

it(`${CALLS} concurrent calls through one client against ${LIMIT} per ${WINDOW_S} s: all succeed, no 429 reaches the wire`, async () => {
  const wire = new Map<number, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
    fetch: async (request) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        const response = await fetch(request);
        if (!request.url.endsWith('/oauth/token')) wire.set(response.status, (wire.get(response.status) ?? 0) + 1);
        return response;
      } finally {
        inFlight--;
      }
    },
  });

  const started = Date.now();
  const results = await Promise.all(Array.from({ length: CALLS }, () => client.GET('/tags')));
  const elapsed = Date.now() - started;

  expect(results.map((r) => toLoyaltyError(r)?.code ?? r.response.status)).toEqual(Array(CALLS).fill(200));
  expect(Object.fromEntries(wire)).toEqual({ 200: CALLS });
  expect(Object.fromEntries(served)).toEqual({ 200: CALLS });
  expect(maxInFlight).toBeLessThanOrEqual(LIMIT);
  // 200 calls need four fixed windows of 60 (the first may be nearly over): pacing waited for the resets.
  expect(elapsed).toBeGreaterThanOrEqual((Math.ceil(CALLS / LIMIT) - 2) * WINDOW_S * 1000);
  expect(elapsed).toBeLessThan((Math.ceil(CALLS / LIMIT) + 2) * WINDOW_S * 1000);
});

it('the limit is real: the same burst without the SDK collects 429s with Retry-After', async () => {
  served.clear();
  const token = await fetchToken(live.url, 'acme-admin');
  const responses = await Promise.all(
    Array.from({ length: CALLS }, () => fetch(`${live.url}/tags`, { headers: { authorization: `Bearer ${token}` } })),
  );
  const statuses = responses.map((r) => r.status);
  // Unless the burst lasted over two windows, most of it was refused.
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(CALLS - 2 * LIMIT);
  expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2 * LIMIT);
  const limited = responses.find((r) => r.status === 429)!;
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(served.get(429)).toBe(statuses.filter((s) => s === 429).length);
});
