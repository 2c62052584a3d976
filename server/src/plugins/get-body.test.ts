import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t.close());

describe('a JSON body on a GET', () => {
  it('fills the query parameters of an operation that has them, and a broken one is a 400', async () => {
    const headers = { ...(await t.auth('acme-admin')), 'content-type': 'application/json' };
    const missing = await t.inject({ method: 'GET', url: '/tags/passes', headers: await t.auth('acme-admin') });
    expect(missing.statusCode, missing.payload).toBe(422);
    const filled = await t.inject({
      method: 'GET',
      url: '/tags/passes',
      headers,
      payload: JSON.stringify({ brand_id: 'brand-acme', tag_id: 'nope' }),
    });
    expect(filled.statusCode, filled.payload).toBe(404);
    const broken = await t.inject({ method: 'GET', url: '/tags/passes', headers, payload: '{' });
    expect(broken.statusCode, broken.payload).toBe(400);
  });

  it('is ignored by an operation without query parameters (no undocumented 400 for a broken body)', async () => {
    const res = await t.inject({
      method: 'GET',
      url: '/openapi.yaml',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(res.statusCode, res.payload).toBe(200);
  });
});
