import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

let t: TestServer;
let till: { authorization: string };
let globexTill: { authorization: string };
let admin: { authorization: string };
beforeAll(async () => {
  t = await createTestServer();
  [till, globexTill, admin] = await Promise.all([t.auth('acme-pos-1'), t.auth('globex-pos-1'), t.auth('acme-admin')]);
});
afterAll(() => t.close());

describe('POST /products/batch', () => {
  it('lists the organization’s products in the order asked and the ids it does not have', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/products/batch',
      headers: till,
      payload: { product_ids: [2, 99, 1, 2] },
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toEqual({
      success: true,
      data: [
        { id: 2, title: 'Voucher by mail', fulfillment: 'delivery', variants: [], values: [] },
        {
          id: 1,
          title: 'Gift box',
          fulfillment: 'pickup',
          variants: [{ id: 11, title: 'Large' }],
          values: [{ id: 21, value: '25.00' }],
        },
      ],
      not_found: [99],
    });
  });

  it('hides another organization’s products, validates, and answers 401/403 by the general rule', async () => {
    const foreign = await t.inject({
      method: 'POST',
      url: '/products/batch',
      headers: globexTill,
      payload: { product_ids: [1] },
    });
    expect(JSON.parse(foreign.payload)).toEqual({ success: true, data: [], not_found: [1] });
    expect(
      (await t.inject({ method: 'POST', url: '/products/batch', headers: till, payload: { product_ids: [] } }))
        .statusCode,
    ).toBe(422);
    expect(
      (
        await t.inject({
          method: 'POST',
          url: '/products/batch',
          headers: till,
          payload: { product_ids: Array.from({ length: 101 }, (_, i) => i + 1) },
        })
      ).statusCode,
    ).toBe(422);
    expect(
      (await t.inject({ method: 'POST', url: '/products/batch', headers: till, payload: { product_ids: ['1'] } }))
        .statusCode,
    ).toBe(422);
    expect(
      (await t.inject({ method: 'POST', url: '/products/batch', headers: {}, payload: { product_ids: [1] } }))
        .statusCode,
    ).toBe(401);
    expect(
      (await t.inject({ method: 'POST', url: '/products/batch', headers: admin, payload: { product_ids: [1] } }))
        .statusCode,
    ).toBe(403);
  });
});
