import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

let t: TestServer;
let admin: { authorization: string };
let readonly: { authorization: string };
let globex: { authorization: string };
let till: { authorization: string };
let globexTill: { authorization: string };
beforeAll(async () => {
  t = await createTestServer();
  [admin, readonly, globex, till, globexTill] = await Promise.all([
    t.auth('acme-admin'),
    t.auth('acme-readonly'),
    t.auth('globex-admin'),
    t.auth('acme-pos-1'),
    t.auth('globex-pos-1'),
  ]);
});
afterAll(() => t.close());

type Json = Record<string, any>;
const call = async (method: string, url: string, payload?: unknown, headers = admin) => {
  const res = await t.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as object }) });
  return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
};
let n = 0;
async function pass(kind: 'coupon' | 'storecard'): Promise<{ code: string; memberId: string; passId: string }> {
  const memberId = (await call('POST', '/members', { brand_id: 'brand-acme', email: `p${++n}@example.org` })).body
    .member_id as string;
  const issued = await call('POST', `/members/${memberId}/passes`, {
    brand_id: 'brand-acme',
    ...(kind === 'coupon' ? { coupon_id: 'coupon-welcome' } : { storecard_id: 'card-points' }),
  });
  const [row] = await t.db.sql<{ id: string }[]>`SELECT id FROM passes WHERE pass_code = ${issued.body.pass_code}`;
  return { code: issued.body.pass_code, memberId, passId: row!.id };
}
const scan = (payload: Json, headers = till) => call('POST', '/passes/scan', payload, headers);
const points = (payload: Json, headers = till) => call('POST', '/passes/scan/storecard', payload, headers);

describe('POST /passes/scan', () => {
  it('redeems a coupon pass once with a device token, records coupon.redeemed, then answers 409', async () => {
    const { code, memberId, passId } = await pass('coupon');
    const res = await scan({ pass_code: code });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      pass_code: code,
      coupon_id: 'coupon-welcome',
      member_id: memberId,
      status: 'redeemed',
      redeemed_at: expect.stringMatching(/Z$/),
    });
    const [event] = await t.db.sql<
      { data: Json }[]
    >`SELECT data FROM events WHERE type = 'coupon.redeemed' AND data->>'pass_id' = ${passId}`;
    expect(event!.data).toEqual({
      coupon_id: 'coupon-welcome',
      pass_id: passId,
      member_id: memberId,
      brand_id: 'brand-acme',
      redeemed_at: res.body.redeemed_at,
    });
    const again = await scan({ pass_code: code });
    expect(again).toMatchObject({ status: 409, body: { error: 'pass_already_redeemed' } });
    expect(
      await t.db.sql`SELECT 1 FROM events WHERE type = 'coupon.redeemed' AND data->>'pass_id' = ${passId}`,
    ).toHaveLength(1);
  });

  it('lets exactly one of ten simultaneous scans redeem', async () => {
    const { code } = await pass('coupon');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => scan({ pass_code: code }, i % 2 ? till : admin)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
  });

  it('answers 422 pass_expired and not_a_coupon_pass', async () => {
    const expired = await pass('coupon');
    await t.db
      .sql`UPDATE passes SET expiration_date = (now() AT TIME ZONE 'UTC')::date - 1 WHERE pass_code = ${expired.code}`;
    expect(await scan({ pass_code: expired.code })).toMatchObject({ status: 422, body: { error: 'pass_expired' } });
    const card = await pass('storecard');
    expect(await scan({ pass_code: card.code })).toMatchObject({ status: 422, body: { error: 'not_a_coupon_pass' } });
  });

  it('redeems a pass that expires today (valid through the end of its date)', async () => {
    const today = await pass('coupon');
    await t.db
      .sql`UPDATE passes SET expiration_date = (now() AT TIME ZONE 'UTC')::date WHERE pass_code = ${today.code}`;
    expect((await scan({ pass_code: today.code })).status).toBe(200);
  });

  it('answers 404 for unknown codes, other organizations (API or device token) and another brand_id', async () => {
    const { code } = await pass('coupon');
    expect((await scan({ pass_code: 'NOPE' })).status).toBe(404);
    expect((await scan({ pass_code: code }, globex)).status).toBe(404);
    expect((await scan({ pass_code: code }, globexTill)).status).toBe(404);
    expect((await scan({ pass_code: code, brand_id: 'brand-globex' })).status).toBe(404);
    expect((await scan({ pass_code: code, brand_id: 'brand-acme' })).status).toBe(200);
  });

  it('validates the body and needs passes.store or promotions.scan', async () => {
    expect((await scan({})).body.errors).toHaveProperty('pass_code');
    expect((await scan({ pass_code: 5 })).status).toBe(422);
    expect((await scan({ pass_code: '' })).status).toBe(422);
    const { code } = await pass('coupon');
    expect((await scan({ pass_code: code }, readonly)).status).toBe(403);
    expect((await scan({ pass_code: code }, { authorization: 'Bearer nope' })).status).toBe(401);
  });
});

describe('POST /passes/scan/storecard', () => {
  it('earns, spends and reverses with 201, and replays a repeated reference with 200', async () => {
    const { code, memberId, passId } = await pass('storecard');
    const earn = await points({ pass_code: code, type: 'earn', points: 50, transaction_reference: 'receipt-1' });
    expect(earn).toMatchObject({
      status: 201,
      body: {
        success: true,
        created: true,
        transaction: { reference: 'receipt-1', type: 'earn', points: 50, balance: 50 },
        pass: { pass_code: code, points: 50, balance: 50 },
      },
    });
    const spend = await points(
      { pass_code: code, type: 'spend', points: 20, transaction_reference: 'receipt-2' },
      admin,
    );
    expect(spend.body.pass).toEqual({ pass_code: code, points: 50, balance: 30 });
    const repeat = await points({ pass_code: code, type: 'earn', points: 999, transaction_reference: 'receipt-1' });
    expect(repeat).toMatchObject({
      status: 200,
      body: { created: false, transaction: earn.body.transaction, pass: { points: 50, balance: 30 } },
    });
    const reverse = await points({
      pass_code: code,
      type: 'reverse',
      transaction_reference: 'void-2',
      reverses: 'receipt-2',
    });
    expect(reverse).toMatchObject({ status: 201, body: { transaction: { type: 'reverse', points: 20, balance: 50 } } });
    const changes = await t.db.sql<
      { data: Json }[]
    >`SELECT data FROM events WHERE type = 'points.changed' AND data->>'pass_id' = ${passId} ORDER BY seq`;
    expect(changes.map((e) => e.data)).toEqual([
      {
        member_id: memberId,
        brand_id: 'brand-acme',
        storecard_id: 'card-points',
        pass_id: passId,
        type: 'earn',
        points: 50,
        balance: 50,
        reference: 'receipt-1',
      },
      {
        member_id: memberId,
        brand_id: 'brand-acme',
        storecard_id: 'card-points',
        pass_id: passId,
        type: 'spend',
        points: 20,
        balance: 30,
        reference: 'receipt-2',
      },
      {
        member_id: memberId,
        brand_id: 'brand-acme',
        storecard_id: 'card-points',
        pass_id: passId,
        type: 'reverse',
        points: 20,
        balance: 50,
        reference: 'void-2',
      },
    ]);
  });

  it('answers 422 insufficient_balance, already_reversed, not_a_storecard_pass and pass_expired', async () => {
    const { code } = await pass('storecard');
    await points({ pass_code: code, type: 'earn', points: 5, transaction_reference: 'e' });
    expect(await points({ pass_code: code, type: 'spend', points: 6, transaction_reference: 's' })).toMatchObject({
      status: 422,
      body: { error: 'insufficient_balance' },
    });
    await points({ pass_code: code, type: 'reverse', transaction_reference: 'r', reverses: 'e' });
    expect(
      await points({ pass_code: code, type: 'reverse', transaction_reference: 'r2', reverses: 'e' }),
    ).toMatchObject({ status: 422, body: { error: 'already_reversed' } });
    const unknown = await points({ pass_code: code, type: 'reverse', transaction_reference: 'r3', reverses: 'nope' });
    expect(unknown.body.errors).toHaveProperty('reverses');
    const coupon = await pass('coupon');
    expect(await points({ pass_code: coupon.code, type: 'earn', points: 1, transaction_reference: 'x' })).toMatchObject(
      { status: 422, body: { error: 'not_a_storecard_pass' } },
    );
    const old = await pass('storecard');
    await t.db
      .sql`UPDATE passes SET expiration_date = (now() AT TIME ZONE 'UTC')::date - 1 WHERE pass_code = ${old.code}`;
    expect(await points({ pass_code: old.code, type: 'earn', points: 1, transaction_reference: 'x' })).toMatchObject({
      status: 422,
      body: { error: 'pass_expired' },
    });
  });

  it('validates the body: type, points 1..1000000, reference 1..191, reverses only with reverse', async () => {
    const { code } = await pass('storecard');
    const base = { pass_code: code, transaction_reference: 'v' };
    for (const payload of [
      { ...base, type: 'earn' },
      { ...base, type: 'earn', points: 0 },
      { ...base, type: 'earn', points: 1_000_001 },
      { ...base, type: 'earn', points: '5' },
      { ...base, type: 'gift', points: 5 },
      { ...base, type: 'reverse' },
      { ...base, type: 'reverse', reverses: 'a', points: 5 },
      { ...base, type: 'earn', points: 5, reverses: 'a' },
      { pass_code: code, type: 'earn', points: 5, transaction_reference: '' },
      { pass_code: code, type: 'earn', points: 5, transaction_reference: 'x'.repeat(192) },
      { type: 'earn', points: 5, transaction_reference: 'x' },
    ]) {
      const res = await points(payload);
      expect(res.status, JSON.stringify(payload)).toBe(422);
      expect(res.body.error).toBe('validation_failed');
    }
  });

  it('answers 404 across organizations and brands, 403 without an ability', async () => {
    const { code } = await pass('storecard');
    const body = { pass_code: code, type: 'earn', points: 1, transaction_reference: 'o' };
    expect((await points(body, globex)).status).toBe(404);
    expect((await points(body, globexTill)).status).toBe(404);
    expect((await points({ ...body, brand_id: 'brand-globex' })).status).toBe(404);
    expect((await points({ ...body, pass_code: 'NOPE' })).status).toBe(404);
    expect((await points(body, readonly)).status).toBe(403);
  });

  it('keeps the transaction_reference idempotency beside an Idempotency-Key', async () => {
    const { code } = await pass('storecard');
    const body = { pass_code: code, type: 'earn', points: 4, transaction_reference: 'ik' };
    const first = await t.inject({
      method: 'POST',
      url: '/passes/scan/storecard',
      headers: { ...till, 'idempotency-key': 'k-1' },
      payload: body,
    });
    const replay = await t.inject({
      method: 'POST',
      url: '/passes/scan/storecard',
      headers: { ...till, 'idempotency-key': 'k-1' },
      payload: body,
    });
    expect(first.statusCode).toBe(201);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.payload).toBe(first.payload);
    const other = await t.inject({
      method: 'POST',
      url: '/passes/scan/storecard',
      headers: { ...till, 'idempotency-key': 'k-2' },
      payload: body,
    });
    expect(other.statusCode).toBe(200);
    expect(JSON.parse(other.payload).pass.balance).toBe(4);
  });
});
