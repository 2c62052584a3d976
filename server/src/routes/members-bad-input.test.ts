import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

/**
 * Every member, pass and webshop route answers malformed input with a 4xx JSON body (checked
 * against openapi.yaml by `inject`), never a 5xx: wrong types, arrays for objects, nulls,
 * over-long strings, unknown ids, non-JSON bodies.
 */
let t: TestServer;
let admin: { authorization: string };
let till: { authorization: string };
let memberId: string;
beforeAll(async () => {
  t = await createTestServer();
  [admin, till] = await Promise.all([t.auth('acme-admin'), t.auth('acme-pos-1')]);
  const res = await t.inject({
    method: 'POST',
    url: '/members',
    headers: admin,
    payload: { brand_id: 'brand-acme', email: 'fuzz@example.org' },
  });
  memberId = JSON.parse(res.payload).member_id;
});
afterAll(() => t.close());

const long = 'x'.repeat(10_000);
const bodies: unknown[] = [
  {},
  [],
  'text',
  42,
  null,
  { brand_id: null },
  { brand_id: 5 },
  { brand_id: ['brand-acme'] },
  { brand_id: long },
  { brand_id: 'brand-acme', email: long },
  { brand_id: 'brand-acme', users: 'x' },
  { brand_id: 'brand-acme', users: [null] },
  { brand_id: 'brand-acme', users: [{ email: 'a@example.org', subscribed_at: 5 }] },
  { brand_id: 'brand-acme', members: [{}] },
  { brand_id: 'brand-acme', emails: [5] },
  { brand_id: 'brand-acme', email: [null] },
  { brand_id: 'brand-acme', page: -1, per_page: 'x' },
  { brand_id: 'brand-acme', coupon_id: 5 },
  { brand_id: 'brand-acme', storecard_id: 'card-points', expiration_date: '2026-13-45' },
  { pass_code: null },
  { pass_code: 'x', type: 'earn', points: 1.5, transaction_reference: 'r' },
  { location_id: 1, users: {} },
  { product_ids: [0] },
  { products: [{ product_id: 'one' }] },
  { off_peak_sale: 'true' },
  { shipping_address: [] },
];
const routes: { method: string; url: string; headers?: 'till' }[] = [
  { method: 'POST', url: '/members/list' },
  { method: 'POST', url: '/import/export' },
  { method: 'POST', url: '/members' },
  { method: 'PUT', url: '/members/{uuid}' },
  { method: 'DELETE', url: '/members/{uuid}' },
  { method: 'PUT', url: '/bulk/members' },
  { method: 'POST', url: '/members/uuid' },
  { method: 'PATCH', url: '/members/subscribe' },
  { method: 'PATCH', url: '/members/unsubscribe' },
  { method: 'POST', url: '/members/subscribe' },
  { method: 'POST', url: '/members/unsubscribe' },
  { method: 'POST', url: '/members/signups' },
  { method: 'POST', url: '/members/location' },
  { method: 'POST', url: '/members/{uuid}/passes' },
  { method: 'POST', url: '/passes/scan' },
  { method: 'POST', url: '/passes/scan/storecard' },
  { method: 'POST', url: '/webshop-promotions/orders', headers: 'till' },
  { method: 'POST', url: '/products/batch', headers: 'till' },
];

describe('bad input', () => {
  it('kept the member the requests above aimed at (a DELETE with brand_id as an array is refused)', async () => {
    const res = await t.inject({
      method: 'DELETE',
      url: `/members/${memberId}`,
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ brand_id: ['brand-acme', 'x'] }),
    });
    expect(res.statusCode).toBe(422);
  });

  for (const route of routes) {
    it(`${route.method} ${route.url} answers 4xx JSON`, async () => {
      const url = route.url.replace('{uuid}', () => memberId);
      for (const body of bodies) {
        const res = await t.inject({
          method: route.method,
          url,
          headers: { ...(route.headers === 'till' ? till : admin), 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        // Some of these bodies are valid for some routes (extra fields are ignored); none may break one.
        expect(res.statusCode, `${JSON.stringify(body).slice(0, 80)} → ${res.payload.slice(0, 200)}`).toBeLessThan(500);
        expect(() => JSON.parse(res.payload)).not.toThrow();
      }
      const broken = await t.inject({
        method: route.method,
        url,
        headers: { ...(route.headers === 'till' ? till : admin), 'content-type': 'application/json' },
        payload: '{"brand_id":',
      });
      expect(broken.statusCode).toBe(400);
      // JSON bodies only.
      const form = await t.inject({
        method: route.method,
        url,
        headers: { ...(route.headers === 'till' ? till : admin), 'content-type': 'text/plain' },
        payload: 'brand_id=x',
      });
      if (route.method === 'DELETE') {
        // Its body is optional (brand_id goes in the query): a text body is ignored.
        expect(form.statusCode).toBe(422);
        expect(JSON.parse(form.payload).errors).toHaveProperty('brand_id');
      } else {
        expect(form.statusCode).toBe(415);
        expect(JSON.parse(form.payload).error).toBe('unsupported_media_type');
      }
    });
  }

  for (const url of ['/members', '/members/{uuid}', '/members/{uuid}/coupons', '/members/{uuid}/storecards']) {
    it(`GET ${url} answers 4xx JSON for bad query strings`, async () => {
      const path = url.replace('{uuid}', () => memberId);
      for (const query of [
        '',
        '?brand_id=',
        `?brand_id=${long}`,
        '?brand_id=brand-acme&email=x&user_identifier=y',
        '?brand_id=brand-acme&page=abc&per_page=0',
        '?brand_id[]=a',
      ]) {
        const res = await t.inject({ method: 'GET', url: path + query, headers: admin });
        expect(res.statusCode, query).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, query).toBeLessThan(500);
      }
    });
  }
});
