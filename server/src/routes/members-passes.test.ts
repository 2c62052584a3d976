import { describe, expect, it } from 'vitest';
import { useApiTestServer, type Auth, type Json, type TestServer } from '#test-helpers/server.js';
import { addDays, todayUtc } from '../lib/dates.js';

let t: TestServer, admin: Auth, readonly: Auth, globex: Auth;
const call = useApiTestServer((api) => ({ t, admin, readonly, globex } = api));
const member = async (email: string, brand = 'brand-acme', headers = admin) =>
  (await call('POST', '/members', { brand_id: brand, email }, headers)).body.member_id as string;
const issue = (id: string, payload: Json, headers = admin) =>
  call('POST', `/members/${id}/passes`, { brand_id: 'brand-acme', ...payload }, headers);
const passRow = async (code: string) =>
  (
    await t.db.sql<
      { id: string; expiration_date: string | null }[]
    >`SELECT id, expiration_date::text FROM passes WHERE pass_code = ${code}`
  )[0]!;

describe('POST /members/{uuid}/passes', () => {
  it('always creates a coupon pass (201), expiring after the coupon valid_days, and records coupon.issued', async () => {
    const id = await member('issue@example.org');
    const first = await issue(id, { coupon_id: 'coupon-welcome' });
    const second = await issue(id, { coupon_id: 'coupon-welcome' });
    for (const res of [first, second]) {
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ success: true, created: true });
      expect(res.body.pass_code).toMatch(/^[0-9A-Z]{16}$/);
      expect(res.body.wallet_url).toBe(`${t.server.info.uri}/wallet/${res.body.pass_code}`);
    }
    expect(first.body.pass_code).not.toBe(second.body.pass_code);
    const row = await passRow(first.body.pass_code);
    expect(row.expiration_date).toBe(addDays(todayUtc(), 30));
    const [event] = await t.db.sql<{ data: Json; organization_id: string }[]>`
      SELECT data, organization_id FROM events WHERE type = 'coupon.issued' AND data->>'pass_id' = ${row.id}`;
    expect(event).toEqual({
      organization_id: 'org-acme',
      data: {
        coupon_id: 'coupon-welcome',
        pass_id: row.id,
        member_id: id,
        brand_id: 'brand-acme',
        expires_at: addDays(todayUtc(), 30),
      },
    });
  });

  it('takes expiration_date as a date or no-date, and rejects past or impossible dates', async () => {
    const id = await member('expiry@example.org');
    const never = await issue(id, { coupon_id: 'coupon-welcome', expiration_date: 'no-date' });
    expect((await passRow(never.body.pass_code)).expiration_date).toBeNull();
    const dated = await issue(id, { coupon_id: 'coupon-welcome', expiration_date: '2099-12-31' });
    expect((await passRow(dated.body.pass_code)).expiration_date).toBe('2099-12-31');
    const today = await issue(id, { coupon_id: 'coupon-welcome', expiration_date: todayUtc() });
    expect(today.status).toBe(201);
    for (const bad of [addDays(todayUtc(), -1), '2099-02-30', '31-12-2099', 'never']) {
      const res = await issue(id, { coupon_id: 'coupon-welcome', expiration_date: bad });
      expect(res.status, bad).toBe(422);
      expect(res.body.errors).toHaveProperty('expiration_date');
    }
  });

  it('creates one storecard pass per member: 201, then 200 with created false and the same pass', async () => {
    const id = await member('card@example.org');
    const first = await issue(id, { storecard_id: 'card-points', expiration_date: '2099-01-01' });
    const again = await issue(id, { storecard_id: 'card-points' });
    expect(first).toMatchObject({ status: 201, body: { created: true } });
    expect(again).toEqual({
      status: 200,
      body: { success: true, created: false, pass_code: first.body.pass_code, wallet_url: first.body.wallet_url },
    });
    expect((await passRow(first.body.pass_code)).expiration_date).toBeNull();
    expect(
      await t.db.sql`SELECT 1 FROM events WHERE type = 'coupon.issued' AND data->>'member_id' = ${id}`,
    ).toHaveLength(0);
  });

  it('creates a single storecard pass when the same issue races', async () => {
    const id = await member('card-race@example.org');
    const results = await Promise.all(Array.from({ length: 5 }, () => issue(id, { storecard_id: 'card-points' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.pass_code)).size).toBe(1);
  });

  it('answers 422 for both or neither of coupon_id/storecard_id and for an inactive coupon', async () => {
    const id = await member('issue-bad@example.org');
    expect((await issue(id, {})).status).toBe(422);
    expect((await issue(id, { coupon_id: 'coupon-welcome', storecard_id: 'card-points' })).status).toBe(422);
    const retired = await issue(id, { coupon_id: 'coupon-retired' });
    expect(retired.status).toBe(422);
    expect(retired.body.errors).toHaveProperty('coupon_id');
    await t.db
      .sql`INSERT INTO storecards (id, organization_id, brand_id, title, active) VALUES ('card-off', 'org-acme', 'brand-acme', 'Off', false) ON CONFLICT DO NOTHING`;
    expect((await issue(id, { storecard_id: 'card-off' })).body.errors).toHaveProperty('storecard_id');
    expect((await call('POST', `/members/${id}/passes`, { coupon_id: 'coupon-welcome' })).body.errors).toHaveProperty(
      'brand_id',
    );
  });

  it('answers 404 for unknown or foreign brand, member, coupon, storecard; 403 without passes.store', async () => {
    const id = await member('issue-scope@example.org');
    const globexMember = await member('issue-g@example.org', 'brand-globex', globex);
    expect((await issue(id, { coupon_id: 'coupon-nope' })).status).toBe(404);
    expect((await issue(id, { coupon_id: 'coupon-globex' })).status).toBe(404);
    expect((await issue(id, { storecard_id: 'card-nope' })).status).toBe(404);
    expect((await issue(globexMember, { coupon_id: 'coupon-welcome' })).status).toBe(404);
    expect((await issue('00000000-0000-4000-8000-000000000000', { coupon_id: 'coupon-welcome' })).status).toBe(404);
    expect((await issue(id, { coupon_id: 'coupon-welcome' }, globex)).status).toBe(404);
    expect(
      (await call('POST', `/members/${id}/passes`, { brand_id: 'brand-globex', coupon_id: 'coupon-globex' })).status,
    ).toBe(404);
    expect((await issue(id, { coupon_id: 'coupon-welcome' }, readonly)).status).toBe(403);
    const membersOnly = await t.auth('acme-admin', ['members.store', 'members.get']);
    expect((await issue(id, { coupon_id: 'coupon-welcome' }, membersOnly)).status).toBe(403);
    expect(
      (await call('POST', '/members/not-a-uuid/passes', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' }))
        .status,
    ).toBe(422);
  });
});

describe('GET /members/{uuid}/coupons and /storecards', () => {
  it('returns the first page of 10, newest first, as a Laravel paginator', async () => {
    const id = await member('pages@example.org');
    const codes: string[] = [];
    for (let i = 0; i < 12; i++) codes.push((await issue(id, { coupon_id: 'coupon-welcome' })).body.pass_code);
    const res = await call('GET', `/members/${id}/coupons?brand_id=brand-acme`);
    expect(res.status).toBe(200);
    const path = `${t.server.info.uri}/members/${id}/coupons`;
    expect(res.body).toMatchObject({
      current_page: 1,
      per_page: 10,
      total: 12,
      last_page: 2,
      from: 1,
      to: 10,
      path,
      first_page_url: `${path}?brand_id=brand-acme&page=1`,
      next_page_url: `${path}?brand_id=brand-acme&page=2`,
      prev_page_url: null,
    });
    expect(res.body.data.map((p: Json) => p.qr_code)).toEqual(codes.slice().reverse().slice(0, 10));
    const [pass] = await t.db.sql<{ id: string }[]>`SELECT id FROM passes WHERE pass_code = ${codes[11]!}`;
    expect(res.body.data[0]).toEqual({
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      expiration_date: addDays(todayUtc(), 30),
      start_date: todayUtc(),
      qr_code: codes[11],
      loyalty_code: pass!.id,
      coupon_title: 'Welcome 10% off',
      coupon_thumbnail_url: 'https://img.example.com/w.png',
      coupon_external_reference: 'WELCOME10',
      status: 'active',
    });
    const page2 = await call('GET', `/members/${id}/coupons?brand_id=brand-acme&page=2&per_page=5`);
    expect(page2.body).toMatchObject({ current_page: 2, per_page: 5, from: 6, to: 10, last_page: 3 });
    expect(page2.body.next_page_url).toBe(`${path}?brand_id=brand-acme&per_page=5&page=3`);
  });

  it('shows coupon status redeemed and expired', async () => {
    const id = await member('status@example.org');
    const redeemed = (await issue(id, { coupon_id: 'coupon-welcome' })).body.pass_code;
    const expired = (await issue(id, { coupon_id: 'coupon-welcome' })).body.pass_code;
    await call('POST', '/passes/scan', { pass_code: redeemed });
    await t.db
      .sql`UPDATE passes SET expiration_date = (now() AT TIME ZONE 'UTC')::date - 1 WHERE pass_code = ${expired}`;
    const res = await call('GET', `/members/${id}/coupons?brand_id=brand-acme`);
    const status = Object.fromEntries(res.body.data.map((p: Json) => [p.qr_code, p.status]));
    expect(status).toEqual({ [redeemed]: 'redeemed', [expired]: 'expired' });
    const profile = await call('GET', `/members/${id}?brand_id=brand-acme`);
    expect(Object.fromEntries(profile.body.coupons.map((p: Json) => [p.pass_code, p.status]))).toEqual(status);
  });

  it('lists storecard passes with points and balance', async () => {
    const id = await member('cards@example.org');
    const code = (await issue(id, { storecard_id: 'card-points' })).body.pass_code;
    await call('POST', '/passes/scan/storecard', {
      pass_code: code,
      type: 'earn',
      points: 30,
      transaction_reference: 't1',
    });
    await call('POST', '/passes/scan/storecard', {
      pass_code: code,
      type: 'spend',
      points: 10,
      transaction_reference: 't2',
    });
    const res = await call('GET', `/members/${id}/storecards?brand_id=brand-acme`);
    expect(res.body.total).toBe(1);
    expect(res.body.data[0]).toMatchObject({
      qr_code: code,
      points: 30,
      balance: 20,
      storecard_title: 'Acme Points',
      status: 'active',
      expiration_date: null,
    });
  });

  it('accepts the parameters as a JSON body, validates per_page 1..100 and scopes member and brand', async () => {
    const id = await member('pages-guard@example.org');
    const body = await t.inject({
      method: 'GET',
      url: `/members/${id}/coupons`,
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ brand_id: 'brand-acme', per_page: 3 }),
    });
    expect(JSON.parse(body.payload).per_page).toBe(3);
    for (const kind of ['coupons', 'storecards']) {
      expect((await call('GET', `/members/${id}/${kind}?brand_id=brand-acme&per_page=101`)).body.errors).toHaveProperty(
        'per_page',
      );
      expect((await call('GET', `/members/${id}/${kind}?brand_id=brand-acme&page=0`)).status).toBe(422);
      expect((await call('GET', `/members/${id}/${kind}`)).body.errors).toHaveProperty('brand_id');
      expect((await call('GET', `/members/${id}/${kind}?brand_id=brand-acme`, undefined, globex)).status).toBe(404);
      expect(
        (await call('GET', `/members/00000000-0000-4000-8000-000000000000/${kind}?brand_id=brand-acme`)).status,
      ).toBe(404);
      expect((await call('GET', `/members/${id}/${kind}?brand_id=brand-acme`, undefined, readonly)).status).toBe(200);
      const noAbility = await t.auth('acme-admin', ['members.store']);
      expect((await call('GET', `/members/${id}/${kind}?brand_id=brand-acme`, undefined, noAbility)).status).toBe(403);
    }
  });
});

describe('POST /members/location', () => {
  it('sets the favourite location of members of the organization and answers their identifiers', async () => {
    const a = await member('loc-a@example.org');
    const b = await member('loc-b@example.org');
    const foreign = await member('loc-g@example.org', 'brand-globex', globex);
    const res = await call('POST', '/members/location', {
      location_id: '1',
      users: [a, foreign, '00000000-0000-4000-8000-000000000000', b],
    });
    expect(res).toEqual({ status: 200, body: { success: true, users: [a, b] } });
    const rows = await t.db.sql<{ member_id: string; favourite_location_id: string | null }[]>`
      SELECT member_id, favourite_location_id FROM brand_members WHERE member_id IN (${a}, ${b}, ${foreign}) ORDER BY member_id`;
    expect(Object.fromEntries(rows.map((r) => [r.member_id, r.favourite_location_id]))).toEqual({
      [a]: '1',
      [b]: '1',
      [foreign]: null,
    });
  });

  it('answers 404 for a location of another organization, 422 for bad input, 403 without members.store', async () => {
    const a = await member('loc-guard@example.org');
    expect((await call('POST', '/members/location', { location_id: '7', users: [a] })).status).toBe(404);
    expect((await call('POST', '/members/location', { location_id: '1', users: [a] }, globex)).status).toBe(404);
    expect((await call('POST', '/members/location', { location_id: '1', users: [] })).body.errors).toHaveProperty(
      'users',
    );
    expect((await call('POST', '/members/location', { location_id: '1', users: ['nope'] })).body.errors).toHaveProperty(
      ['users.0'],
    );
    expect((await call('POST', '/members/location', { users: [a] })).body.errors).toHaveProperty('location_id');
    expect((await call('POST', '/members/location', { location_id: '1', users: [a] }, readonly)).status).toBe(403);
  });
});
