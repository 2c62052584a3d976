import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

let t: TestServer;
let till: { authorization: string };
let globexTill: { authorization: string };
let admin: { authorization: string };
const PROMOTION = '0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10';
beforeAll(async () => {
  t = await createTestServer();
  [till, globexTill, admin] = await Promise.all([t.auth('acme-pos-1'), t.auth('globex-pos-1'), t.auth('acme-admin')]);
  await t.db.sql`
    INSERT INTO promotions (id, organization_id, title, active, starts_at, ends_at) VALUES
      ('11111111-1111-4111-8111-111111111111', 'org-acme', 'Paused', false, '2020-01-01', '2099-01-01'),
      ('22222222-2222-4222-8222-222222222222', 'org-acme', 'Future', true, '2098-01-01', '2099-01-01'),
      ('33333333-3333-4333-8333-333333333333', 'org-acme', 'Over', true, '2020-01-01', '2021-01-01'),
      ('44444444-4444-4444-8444-444444444444', 'org-globex', 'Globex', true, '2020-01-01', '2099-01-01')`;
  await t.db
    .sql`INSERT INTO products (organization_id, id, title, fulfillment) VALUES ('org-acme', 3, 'Not promoted', 'pickup')`;
});
afterAll(() => t.close());

type Json = Record<string, any>;
const order = async (payload: Json, headers: Record<string, string> = till) => {
  const res = await t.inject({ method: 'POST', url: '/webshop-promotions/orders', headers, payload });
  return { status: res.statusCode, body: JSON.parse(res.payload) as Json };
};
const address = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  address1: '12 St James',
  city: 'London',
  country: 'GB',
  zip: 'SW1Y',
};
const base = (extra: Json = {}) => ({
  firstname: 'Ada',
  lastname: 'Lovelace',
  email: 'ada@example.org',
  promotion_identifier: PROMOTION,
  organization_identifier: 'org-acme',
  off_peak_sale: false,
  products: [{ product_id: 1, quantity: 2, location_id: 1, variant_id: 11, value_id: 21 }],
  ...extra,
});

describe('POST /webshop-promotions/orders', () => {
  it('creates an order (201) with one activated code per unit', async () => {
    const res = await order(
      base({
        products: [
          { product_id: 1, quantity: 2, location_id: 1, variant_id: 11, value_id: 21 },
          { product_id: 2, quantity: 1 },
        ],
        shipping_address: address,
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, message: 'Order created', shipping_address: address });
    expect(res.body.result).toHaveLength(3);
    expect(res.body.result[0]).toEqual({
      code: expect.stringMatching(/^[0-9A-Z]{16}$/),
      expiration_date: '2099-01-01 00:00:00',
      product_title: 'Gift box',
      url: `${t.server.info.uri}/promotion-codes/${res.body.result[0].code}`,
      variant: 'Large',
      value: '25.00',
    });
    expect(res.body.result[2]).toMatchObject({ product_title: 'Voucher by mail', variant: null, value: null });
    expect(new Set(res.body.result.map((r: Json) => r.code)).size).toBe(3);
    const codes = await t.db
      .sql`SELECT 1 FROM webshop_order_codes WHERE code = ANY(${res.body.result.map((r: Json) => r.code)}) AND activated_at IS NOT NULL`;
    expect(codes).toHaveLength(3);
  });

  it('matches the customer on e-mail (case-insensitive) or creates one with member.created (brand_id null)', async () => {
    await order(base({ email: 'Customer@Example.org', off_peak_sale: 1 }));
    await order(base({ email: 'customer@example.org', firstname: 'Other', off_peak_sale: 0 }));
    const members = await t.db.sql<{ id: string; first_name: string }[]>`
      SELECT id, first_name FROM members WHERE organization_id = 'org-acme' AND lower(email) = 'customer@example.org'`;
    expect(members).toHaveLength(1);
    expect(members[0]!.first_name).toBe('Ada');
    const events = await t.db.sql<
      { data: Json }[]
    >`SELECT data FROM events WHERE type = 'member.created' AND data->>'member_id' = ${members[0]!.id}`;
    expect(events.map((e) => e.data)).toEqual([{ member_id: members[0]!.id, brand_id: null }]);
    const orders = await t.db.sql<
      { off_peak_sale: boolean }[]
    >`SELECT off_peak_sale FROM webshop_orders WHERE member_id = ${members[0]!.id} ORDER BY created_at`;
    expect(orders.map((o) => o.off_peak_sale)).toEqual([true, false]);
  });

  it('answers null shipping_address when no delivery product is ordered', async () => {
    const res = await order(base({ shipping_address: address }));
    expect(res.status).toBe(201);
    expect(res.body.shipping_address).toBeNull();
  });

  it('rejects off_peak_sale strings with the webshop validation body', async () => {
    for (const value of ['true', 'false', '1', 2, null]) {
      const res = await order(base({ off_peak_sale: value }));
      expect(res.status, String(value)).toBe(422);
      expect(res.body).toEqual({
        status: false,
        message: 'Validation failed',
        errors: { off_peak_sale: expect.any(Array) },
      });
    }
  });

  it('answers field failures in the validation shape', async () => {
    const cases: [Json, string][] = [
      [base({ products: [{ product_id: 1, quantity: 1 }] }), 'products.0.location_id'],
      [
        base({ products: [{ product_id: 2, quantity: 1, location_id: 1 }], shipping_address: address }),
        'products.0.location_id',
      ],
      [base({ products: [{ product_id: 2, quantity: 1 }] }), 'shipping_address'],
      [
        base({ products: [{ product_id: 2, quantity: 1 }], shipping_address: { ...address, zip: undefined } }),
        'shipping_address.zip',
      ],
      [base({ products: [] }), 'products'],
      [base({ products: [{ product_id: 1, quantity: 0, location_id: 1 }] }), 'products.0.quantity'],
      [base({ products: [{ product_id: 1, quantity: 101, location_id: 1 }] }), 'products.0.quantity'],
      [base({ email: 'nope' }), 'email'],
      [base({ firstname: undefined }), 'firstname'],
      [base({ promotion_identifier: 'not-a-uuid' }), 'promotion_identifier'],
    ];
    for (const [payload, field] of cases) {
      const res = await order(payload);
      expect(res.status, field).toBe(422);
      expect(res.body.status).toBe(false);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors), field).toContain(field);
    }
  });

  it('answers product-level failures in the product shape', async () => {
    const cases: [Json, RegExp][] = [
      [base({ products: [{ product_id: 99, quantity: 1 }] }), /Product 99 does not exist/],
      [base({ products: [{ product_id: 3, quantity: 1, location_id: 1 }] }), /Product 3 is not part of this promotion/],
      [base({ products: [{ product_id: 1, quantity: 1, location_id: 7 }] }), /Location 7/],
      [base({ products: [{ product_id: 1, quantity: 1, location_id: 1, variant_id: 12 }] }), /Variant 12/],
      [base({ products: [{ product_id: 1, quantity: 1, location_id: 1, value_id: 22 }] }), /Value 22/],
    ];
    for (const [payload, message] of cases) {
      const res = await order(payload);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ status: false, errors: [expect.stringMatching(message)] });
    }
  });

  it('maps organization, device and promotion checks to 404 and 403', async () => {
    expect(await order(base({ organization_identifier: 'org-nope' }))).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
    expect(await order(base({ organization_identifier: 'org-globex' }))).toMatchObject({
      status: 403,
      body: { error: 'forbidden' },
    });
    expect(await order(base(), globexTill)).toMatchObject({ status: 403 });
    // Globex's own till and promotion get through to the products, which are Acme's.
    expect(
      await order(
        base({ organization_identifier: 'org-globex', promotion_identifier: '44444444-4444-4444-8444-444444444444' }),
        globexTill,
      ),
    ).toEqual({ status: 422, body: { status: false, errors: ['Product 1 does not exist.'] } });
    expect(await order(base({ promotion_identifier: '44444444-4444-4444-8444-444444444444' }))).toMatchObject({
      status: 404,
    });
    expect(await order(base({ promotion_identifier: '55555555-5555-4555-8555-555555555555' }))).toMatchObject({
      status: 404,
    });
    for (const inactive of [
      '11111111-1111-4111-8111-111111111111',
      '22222222-2222-4222-8222-222222222222',
      '33333333-3333-4333-8333-333333333333',
    ]) {
      expect(await order(base({ promotion_identifier: inactive })), inactive).toMatchObject({
        status: 403,
        body: { message: 'The promotion is not active.' },
      });
    }
  });

  it('answers 401 (not 403) for a missing token, a bad token and a token without promotions.scan', async () => {
    expect((await order(base(), {})).status).toBe(401);
    expect((await order(base(), { authorization: 'Bearer nope' })).status).toBe(401);
    const res = await order(base(), admin);
    expect(res).toEqual({ status: 401, body: { message: 'Unauthenticated.', error: 'unauthenticated' } });
  });

  it('creates nothing when the order fails', async () => {
    const [before] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webshop_order_codes`;
    await order(
      base({
        email: 'failing@example.org',
        products: [
          { product_id: 1, quantity: 1, location_id: 1 },
          { product_id: 99, quantity: 1 },
        ],
      }),
    );
    const [after] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webshop_order_codes`;
    expect(after!.n).toBe(before!.n);
    expect(await t.db.sql`SELECT 1 FROM members WHERE email = 'failing@example.org'`).toHaveLength(0);
  });
});
