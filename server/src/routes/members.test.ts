import { describe, expect, it } from 'vitest';
import { useApiTestServer, type Auth, type Json, type TestServer } from '#test-helpers/server.js';

let t: TestServer, admin: Auth, readonly: Auth, globex: Auth;
const call = useApiTestServer((api) => ({ t, admin, readonly, globex } = api));
const create = (payload: Json, headers = admin) =>
  call('POST', '/members', { brand_id: 'brand-acme', ...payload }, headers);
const memberId = async (email: string, extra: Json = {}) =>
  (await create({ email, ...extra })).body.member_id as string;
const events = (type: string, memberId: string) =>
  t.db.sql<
    { data: Json }[]
  >`SELECT data FROM events WHERE type = ${type} AND data->>'member_id' = ${memberId} ORDER BY seq`;

describe('POST /members', () => {
  it('creates a member (201) and records member.created with identifiers only', async () => {
    const res = await create({
      email: 'Ada@Example.org',
      first_name: 'Ada',
      last_name: 'Lovelace',
      birth_day: '1815-12-10',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, created: true });
    expect(res.body.member_id).toBe(res.body.identifier);
    const recorded = await events('member.created', res.body.member_id);
    expect(recorded.map((e) => e.data)).toEqual([{ member_id: res.body.member_id, brand_id: 'brand-acme' }]);
  });

  it('gives the member and its event UUIDv7 ids (time-ordered, documented under Identifiers)', async () => {
    const res = await create({ email: 'ordered@example.org' });
    expect(res.body.member_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const [event] = await t.db.sql<
      { id: string }[]
    >`SELECT id FROM events WHERE data->>'member_id' = ${res.body.member_id}`;
    expect(event!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });

  it('is idempotent on the e-mail, case-insensitively, and overwrites nothing (200, created false)', async () => {
    const first = await create({ email: 'grace@example.org', first_name: 'Grace', city: 'New York' });
    const again = await create({
      email: 'GRACE@example.ORG',
      first_name: 'Someone else',
      city: 'Paris',
      unsubscribed: true,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      success: true,
      created: false,
      member_id: first.body.member_id,
      identifier: first.body.member_id,
    });
    const got = await call('GET', `/members/${first.body.member_id}?brand_id=brand-acme`);
    expect(got.body.profile).toMatchObject({ email: 'grace@example.org', first_name: 'Grace', city: 'New York' });
    expect(got.body.unsubscribed).toBe(false);
    expect(await events('member.created', first.body.member_id)).toHaveLength(1);
  });

  it('creates one member when the same e-mail is posted five times at once (one 201, four 200)', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => create({ email: i % 2 ? 'RACE@example.org' : 'race@example.org' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.member_id)).size).toBe(1);
    expect(await events('member.created', results[0]!.body.member_id)).toHaveLength(1);
  });

  it('links a known member to a brand it was not linked to, and records member.created for the link', async () => {
    const id = await memberId('linked-later@example.org');
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-acme-2', 'org-acme', 'Acme Outlet') ON CONFLICT DO NOTHING`;
    const res = await call('POST', '/members', {
      brand_id: 'brand-acme-2',
      email: 'LINKED-later@example.org',
      unsubscribed: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: false, member_id: id });
    const got = await call('GET', `/members/${id}?brand_id=brand-acme-2`);
    expect(got.status).toBe(200);
    expect(got.body.unsubscribed).toBe(true);
    expect((await events('member.created', id)).map((e) => e.data.brand_id)).toEqual(['brand-acme', 'brand-acme-2']);
  });

  it('creates members unsubscribed on request (default subscribed)', async () => {
    const id = await memberId('quiet@example.org', { unsubscribed: true });
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`)).body.unsubscribed).toBe(true);
  });

  it('answers 422 naming the field for invalid input, never 5xx', async () => {
    const long = 'x'.repeat(192);
    for (const [payload, field] of [
      [{ email: 'not-an-email' }, 'email'],
      [{ email: 'a@example.org', first_name: long }, 'first_name'],
      [{ email: 'a@example.org', last_name: long }, 'last_name'],
      [{ email: 'a@example.org', birth_day: '2026-02-30' }, 'birth_day'],
      [{ email: 'a@example.org', birth_day: '10-12-1815' }, 'birth_day'],
      [{ email: 'a@example.org', unsubscribed: 'yes' }, 'unsubscribed'],
      [{ email: 'a@example.org', brand_id: undefined }, 'brand_id'],
    ] as const) {
      const res = await call('POST', '/members', { brand_id: 'brand-acme', ...payload });
      expect(res.status, JSON.stringify(payload)).toBe(422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await call('POST', '/members', { brand_id: 'brand-acme' })).body.errors).toHaveProperty('email');
    expect(
      (
        await t.inject({
          method: 'POST',
          url: '/members',
          headers: { ...admin, 'content-type': 'application/json' },
          payload: '{"brand_id":',
        })
      ).statusCode,
    ).toBe(400);
  });

  it('accepts a 191-character name', async () => {
    expect((await create({ email: 'long@example.org', first_name: 'é'.repeat(191) })).status).toBe(201);
  });

  it('answers 404 for a brand of another organization and 403 without members.store', async () => {
    expect((await create({ email: 'x@example.org' }, globex)).status).toBe(404);
    expect((await call('POST', '/members', { brand_id: 'brand-nope', email: 'x@example.org' })).status).toBe(404);
    expect((await create({ email: 'x@example.org' }, readonly)).status).toBe(403);
    expect(
      (
        await call(
          'POST',
          '/members',
          { brand_id: 'brand-acme', email: 'x@example.org' },
          { authorization: 'Bearer nope' },
        )
      ).status,
    ).toBe(401);
  });
});

describe('GET /members/{uuid}', () => {
  it('returns the profile response with nulls for empty fields and pass summaries', async () => {
    const id = await memberId('profile@example.org', { first_name: 'Pro', city: 'Leeds' });
    await call('POST', `/members/${id}/passes`, { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    await call('POST', `/members/${id}/passes`, { brand_id: 'brand-acme', storecard_id: 'card-points' });
    const res = await call('GET', `/members/${id}?brand_id=brand-acme`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      member_id: id,
      identifier: id,
      brand_id: 'brand-acme',
      unsubscribed: false,
      profile: {
        email: 'profile@example.org',
        first_name: 'Pro',
        last_name: null,
        full_name: 'Pro',
        phone_number: null,
        birth_day: null,
        city: 'Leeds',
      },
    });
    expect(res.body.subscribed_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(res.body.coupons).toHaveLength(1);
    expect(res.body.storecards).toHaveLength(1);
    expect(res.body.coupons[0].status).toBe('active');
    expect(res.body.coupons[0].wallet_url).toBe(`${t.server.info.uri}/wallet/${res.body.coupons[0].pass_code}`);
  });

  it('answers 404 for an unknown member, a member of another brand or organization, and a bad uuid', async () => {
    const id = await memberId('hidden@example.org');
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`, undefined, globex)).status).toBe(404);
    expect((await call('GET', `/members/${id}?brand_id=brand-globex`, undefined, globex)).status).toBe(404);
    expect((await call('GET', `/members/00000000-0000-4000-8000-000000000000?brand_id=brand-acme`)).status).toBe(404);
    const bad = await call('GET', '/members/not-a-uuid?brand_id=brand-acme');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty('uuid');
    expect((await call('GET', `/members/${id}`)).body.errors).toHaveProperty('brand_id');
  });

  it('needs members.get', async () => {
    const id = await memberId('ability@example.org');
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`, undefined, readonly)).status).toBe(200);
    const noAbility = await t.auth('acme-admin', ['tags.get']);
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`, undefined, noAbility)).status).toBe(403);
  });
});

describe('PUT /members/{uuid}', () => {
  it('changes only the sent fields, clears with null and ignores an e-mail', async () => {
    const id = await memberId('update@example.org', {
      first_name: 'Up',
      last_name: 'Date',
      city: 'Bath',
      phone_number: '123',
    });
    const res = await call('PUT', `/members/${id}`, {
      brand_id: 'brand-acme',
      city: 'York',
      phone_number: null,
      email: 'other@example.org',
      birth_day: '1990-01-31',
    });
    expect(res.status).toBe(200);
    expect(res.body.profile).toMatchObject({
      email: 'update@example.org',
      first_name: 'Up',
      last_name: 'Date',
      full_name: 'Up Date',
      city: 'York',
      phone_number: null,
      birth_day: '1990-01-31',
    });
    const empty = await call('PUT', `/members/${id}`, { brand_id: 'brand-acme' });
    expect(empty.body.profile.city).toBe('York');
  });

  it('answers 422 for invalid fields and 404 across organizations or brands', async () => {
    const id = await memberId('update-bad@example.org');
    expect(
      (await call('PUT', `/members/${id}`, { brand_id: 'brand-acme', first_name: 'x'.repeat(192) })).body.errors,
    ).toHaveProperty('first_name');
    expect(
      (await call('PUT', `/members/${id}`, { brand_id: 'brand-acme', birth_day: '2025-13-01' })).body.errors,
    ).toHaveProperty('birth_day');
    expect((await call('PUT', `/members/${id}`, { brand_id: 'brand-acme', city: 5 })).status).toBe(422);
    expect((await call('PUT', `/members/${id}`, { city: 'x' })).body.errors).toHaveProperty('brand_id');
    expect((await call('PUT', `/members/${id}`, { brand_id: 'brand-globex', city: 'x' }, globex)).status).toBe(404);
    expect((await call('PUT', `/members/${id}`, { brand_id: 'brand-acme', city: 'x' }, globex)).status).toBe(404);
    expect((await call('PUT', `/members/${id}`, { brand_id: 'brand-acme', city: 'x' }, readonly)).status).toBe(403);
  });
});

describe('DELETE /members/{uuid}', () => {
  it('removes the member from the brand with passes, tag memberships and, with no brand left, the member', async () => {
    const id = await memberId('delete@example.org');
    const pass = await call('POST', `/members/${id}/passes`, { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    const [tag] = await t.db.sql<{ id: string }[]>`
      INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES ('org-acme', 'brand-acme', 'Del', 'del-tag') RETURNING id`;
    await t.db.sql`INSERT INTO tag_members (tag_id, member_id) VALUES (${tag!.id}, ${id})`;
    await t.db.sql`INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status)
                   VALUES (${tag!.id}, 'coupon', 'coupon-welcome', ${id}, gen_random_uuid(), 'issued')`;
    const res = await call('DELETE', `/members/${id}?brand_id=brand-acme`);
    expect(res).toMatchObject({ status: 200, body: { success: true, message: 'Member deleted' } });
    expect(await t.db.sql`SELECT 1 FROM passes WHERE pass_code = ${pass.body.pass_code}`).toHaveLength(0);
    expect(await t.db.sql`SELECT 1 FROM tag_members WHERE member_id = ${id}`).toHaveLength(0);
    expect(await t.db.sql`SELECT 1 FROM voucher_grants WHERE member_id = ${id}`).toHaveLength(0);
    expect(await t.db.sql`SELECT 1 FROM members WHERE id = ${id}`).toHaveLength(0);
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`)).status).toBe(404);
    expect((await call('DELETE', `/members/${id}?brand_id=brand-acme`)).status).toBe(404);
  });

  it('keeps the member and its other brand while removing one brand; takes brand_id from a JSON body too', async () => {
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-acme-3', 'org-acme', 'Acme Three') ON CONFLICT DO NOTHING`;
    const id = await memberId('two-brands@example.org');
    await call('POST', '/members', { brand_id: 'brand-acme-3', email: 'two-brands@example.org' });
    const res = await call('DELETE', `/members/${id}`, { brand_id: 'brand-acme' });
    expect(res.status).toBe(200);
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`)).status).toBe(404);
    expect((await call('GET', `/members/${id}?brand_id=brand-acme-3`)).status).toBe(200);
  });

  it('answers 422 without brand_id, 404 across organizations, 403 without members.store', async () => {
    const id = await memberId('delete-guard@example.org');
    expect((await call('DELETE', `/members/${id}`)).status).toBe(422);
    expect((await call('DELETE', `/members/${id}?brand_id=brand-acme`, undefined, globex)).status).toBe(404);
    expect((await call('DELETE', `/members/${id}?brand_id=brand-acme`, undefined, readonly)).status).toBe(403);
    expect((await call('GET', `/members/${id}?brand_id=brand-acme`)).status).toBe(200);
  });
});

describe('GET /members (search)', () => {
  it('finds by e-mail (case-insensitive) or identifier and lists pass codes by kind', async () => {
    const id = await memberId('search@example.org', { first_name: 'Sea', last_name: 'Rch' });
    const coupon = await call('POST', `/members/${id}/passes`, { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    const card = await call('POST', `/members/${id}/passes`, { brand_id: 'brand-acme', storecard_id: 'card-points' });
    const expected = {
      success: true,
      email: 'search@example.org',
      member_id: id,
      identifier: id,
      member_full_name: 'Sea Rch',
      pass_codes: [coupon.body.pass_code],
      storecards: [card.body.pass_code],
    };
    expect((await call('GET', '/members?brand_id=brand-acme&email=SEARCH@example.org')).body).toEqual(expected);
    expect((await call('GET', `/members?brand_id=brand-acme&user_identifier=${id}`)).body).toEqual(expected);
    expect(
      (await call('GET', `/members?brand_id=brand-acme&user_identifier=${id}&email=search@example.org`)).body,
    ).toEqual(expected);
  });

  it('takes the parameters from a JSON body on the GET', async () => {
    const id = await memberId('search-body@example.org');
    const res = await t.inject({
      method: 'GET',
      url: '/members',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ brand_id: 'brand-acme', email: 'search-body@example.org' }),
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload).member_id).toBe(id);
  });

  it('answers 422 for neither, 404 when both name different members or nobody, 404 across organizations', async () => {
    const a = await memberId('search-a@example.org');
    await memberId('search-b@example.org');
    const neither = await call('GET', '/members?brand_id=brand-acme');
    expect(neither.status).toBe(422);
    expect(neither.body.errors).toHaveProperty('email');
    expect(
      (await call('GET', `/members?brand_id=brand-acme&user_identifier=${a}&email=search-b@example.org`)).status,
    ).toBe(404);
    expect((await call('GET', '/members?brand_id=brand-acme&email=nobody@example.org')).status).toBe(404);
    expect(
      (await call('GET', '/members?brand_id=brand-acme&email=search-a@example.org', undefined, globex)).status,
    ).toBe(404);
    expect((await call('GET', '/members?brand_id=brand-acme&email=bad')).status).toBe(422);
    expect((await call('GET', '/members?brand_id=brand-acme&user_identifier=bad')).status).toBe(422);
    expect((await call('GET', '/members?email=search-a@example.org')).body.errors).toHaveProperty('brand_id');
    const noAbility = await t.auth('acme-admin', ['members.store']);
    expect(
      (await call('GET', '/members?brand_id=brand-acme&email=search-a@example.org', undefined, noAbility)).status,
    ).toBe(403);
  });
});

describe('POST /members/uuid', () => {
  it('maps known e-mails of the brand (keys as sent) and leaves the rest out', async () => {
    const id = await memberId('uuid-a@example.org');
    const res = await call('POST', '/members/uuid', {
      brand_id: 'brand-acme',
      emails: ['UUID-A@example.org', 'nobody@example.org', 'not an email', '__proto__'],
    });
    expect(res).toMatchObject({
      status: 200,
      body: { message: 'Request successful', data: { 'UUID-A@example.org': id } },
    });
    expect(Object.keys(res.body.data)).toEqual(['UUID-A@example.org']);
    expect(
      (await call('POST', '/members/uuid', { brand_id: 'brand-acme', emails: ['nobody@example.org'] })).body.data,
    ).toEqual({});
  });

  it('validates, scopes and checks the ability', async () => {
    expect((await call('POST', '/members/uuid', { brand_id: 'brand-acme', emails: [] })).body.errors).toHaveProperty(
      'emails',
    );
    expect(
      (await call('POST', '/members/uuid', { brand_id: 'brand-acme', emails: Array(2001).fill('a@b.c') })).status,
    ).toBe(422);
    expect((await call('POST', '/members/uuid', { brand_id: 'brand-acme', emails: ['a@b.c'] }, globex)).status).toBe(
      404,
    );
    const noAbility = await t.auth('acme-admin', ['members.store']);
    expect((await call('POST', '/members/uuid', { brand_id: 'brand-acme', emails: ['a@b.c'] }, noAbility)).status).toBe(
      403,
    );
  });
});

describe('PUT /bulk/members', () => {
  it('updates many members in one call with partial rules and reports unknown identifiers', async () => {
    const a = await memberId('bulk-a@example.org', { city: 'Ayr', phone_number: '1' });
    const b = await memberId('bulk-b@example.org', { city: 'Bute' });
    const globexMember = (await create({ brand_id: 'brand-globex', email: 'bulk-g@example.org' }, globex)).body
      .member_id as string;
    const unknown = '00000000-0000-4000-8000-000000000001';
    const res = await call('PUT', '/bulk/members', {
      brand_id: 'brand-acme',
      members: [
        { identifier: a, phone_number: null, country: 'GB' },
        { identifier: b, first_name: 'Bee', birth_day: '2000-02-29' },
        { identifier: unknown, city: 'x' },
        { identifier: globexMember, city: 'x' },
      ],
    });
    expect(res).toMatchObject({
      status: 200,
      body: { message: 'Request successful', data: { updated: 2, not_found: [unknown, globexMember] } },
    });
    expect((await call('GET', `/members/${a}?brand_id=brand-acme`)).body.profile).toMatchObject({
      city: 'Ayr',
      phone_number: null,
      country: 'GB',
    });
    expect((await call('GET', `/members/${b}?brand_id=brand-acme`)).body.profile).toMatchObject({
      city: 'Bute',
      first_name: 'Bee',
      birth_day: '2000-02-29',
    });
    expect(
      (await call('GET', `/members/${globexMember}?brand_id=brand-globex`, undefined, globex)).body.profile.city,
    ).toBeNull();
  });

  it('lets bulk updates over the same members in opposite orders all succeed', async () => {
    const ids = await Promise.all(Array.from({ length: 60 }, (_, i) => memberId(`bulk-order-${i}@example.org`)));
    const items = ids.map((identifier, i) => ({ identifier, city: `C${i}` }));
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([
        call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: items }),
        call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: items.slice().reverse() }),
        call('POST', '/members/location', { location_id: '1', users: ids }),
        call('POST', '/members/location', { location_id: '1', users: ids.slice().reverse() }),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    }
  });

  it('validates every item before changing anything (422 naming members.N.field)', async () => {
    const a = await memberId('bulk-c@example.org', { city: 'Cork' });
    const res = await call('PUT', '/bulk/members', {
      brand_id: 'brand-acme',
      members: [
        { identifier: a, city: 'Changed' },
        { identifier: a, birth_day: '2001-02-29' },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveProperty(['members.1.birth_day']);
    expect((await call('GET', `/members/${a}?brand_id=brand-acme`)).body.profile.city).toBe('Cork');
    const long = await call('PUT', '/bulk/members', {
      brand_id: 'brand-acme',
      members: [{ identifier: a, last_name: 'x'.repeat(192) }],
    });
    expect(long.body.errors).toHaveProperty(['members.0.last_name']);
    expect(
      (await call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: [{ identifier: 'nope' }] })).body.errors,
    ).toHaveProperty(['members.0.identifier']);
    expect((await call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: [] })).status).toBe(422);
    expect(
      (await call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: Array(2001).fill({ identifier: a }) }))
        .status,
    ).toBe(422);
    expect(
      (await call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: [{ identifier: a }] }, globex)).status,
    ).toBe(404);
    expect(
      (await call('PUT', '/bulk/members', { brand_id: 'brand-acme', members: [{ identifier: a }] }, readonly)).status,
    ).toBe(403);
  });
});
