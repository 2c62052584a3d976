import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

/** Issue 14: X-Request-Id on every answer, the client's when it is safe, in the bodies of server errors. */
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ rateLimitToken: 2, rateLimitWindowSeconds: 60 });
});
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('X-Request-Id', () => {
  it('keeps a safe id the client sent, on a 200 and on a 404', async () => {
    const ok = await t.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'checkout-42.retry:1' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-request-id']).toBe('checkout-42.retry:1');
    const missing = await t.inject({ method: 'GET', url: '/no-such-route', headers: { 'x-request-id': 'abc' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toBe('abc');
  });

  it('makes a new one when none is sent, or when the one sent is too long or unsafe (a header or log injection)', async () => {
    for (const sent of [undefined, 'x'.repeat(129), 'a b', 'a\u0007b', '<script>', '', 'someone@example.org']) {
      const res = await t.inject({
        method: 'GET',
        url: '/health',
        headers: sent === undefined ? {} : { 'x-request-id': sent },
      });
      expect(res.headers['x-request-id'], JSON.stringify(sent)).toMatch(UUID);
    }
    const a = await t.inject({ method: 'GET', url: '/health' });
    const b = await t.inject({ method: 'GET', url: '/health' });
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('is on 401, 422 and 429 answers too', async () => {
    const unauthenticated = await t.inject({ method: 'GET', url: '/tags', headers: { 'x-request-id': 'r-401' } });
    expect([unauthenticated.statusCode, unauthenticated.headers['x-request-id']]).toEqual([401, 'r-401']);
    const headers = await t.auth('acme-admin');
    const invalid = await t.inject({
      method: 'POST',
      url: '/tags',
      headers: { ...headers, 'x-request-id': 'r-422' },
      payload: { tag: 'x' },
    });
    expect([invalid.statusCode, invalid.headers['x-request-id']]).toEqual([422, 'r-422']);
    let limited: Awaited<ReturnType<TestServer['inject']>> | undefined;
    for (let i = 0; i < 5 && limited?.statusCode !== 429; i++)
      limited = await t.inject({ method: 'GET', url: '/tags', headers: { ...headers, 'x-request-id': `r-429-${i}` } });
    expect(limited!.statusCode).toBe(429);
    expect(limited!.headers['x-request-id']).toMatch(/^r-429-\d$/);
  });
});
