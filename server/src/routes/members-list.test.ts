import { beforeAll, describe, expect, it } from 'vitest';
import { useApiTestServer, type Auth, type Json, type TestServer } from '#test-helpers/server.js';

/** POST /members/list, POST /import/export and POST /members/signups (routes in members.ts). */
let t: TestServer, admin: Auth, readonly: Auth, globex: Auth;
const call = useApiTestServer((api) => ({ t, admin, readonly, globex } = api));
beforeAll(async () => {
  // A brand of its own so the counts below are exact.
  await t.db
    .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-list', 'org-acme', 'List') ON CONFLICT DO NOTHING`;
});
const signups = (users: Json[], brand = 'brand-list', headers = admin) =>
  call('POST', '/members/signups', { brand_id: brand, users }, headers);

describe('POST /members/signups', () => {
  it('creates new members, reports known ones as found, and links them to the brand', async () => {
    const known = await call('POST', '/members', {
      brand_id: 'brand-acme',
      email: 'known@example.org',
      first_name: 'Kept',
    });
    const res = await signups([
      { email: 'new-1@example.org', first_name: 'New', last_name: 'One', subscribed_at: '2026-01-02 03:04:05' },
      { email: 'KNOWN@example.org', first_name: 'Overwritten?' },
      { email: 'new-2@example.org', unsubscribed: true, subscribed_at: '2025-06-01T10:00:00+02:00' },
      { email: 'New-1@example.org' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Request successful');
    expect(Object.keys(res.body.data.new)).toEqual(['new-1@example.org', 'new-2@example.org']);
    expect(res.body.data.found).toEqual({ 'KNOWN@example.org': known.body.member_id });
    const member = await call('GET', `/members/${known.body.member_id}?brand_id=brand-list`);
    expect(member.body.profile.first_name).toBe('Kept');
    const one = await call('GET', `/members/${res.body.data.new['new-1@example.org']}?brand_id=brand-list`);
    expect(one.body).toMatchObject({
      subscribed_at: '2026-01-02 03:04:05',
      unsubscribed: false,
      profile: { full_name: 'New One' },
    });
    const two = await call('GET', `/members/${res.body.data.new['new-2@example.org']}?brand_id=brand-list`);
    expect(two.body).toMatchObject({ subscribed_at: '2025-06-01 08:00:00', unsubscribed: true });
    const created = await t.db.sql<{ data: Json }[]>`
      SELECT data FROM events WHERE type = 'member.created' AND data->>'brand_id' = 'brand-list'`;
    expect(created.map((e) => e.data.member_id).sort()).toEqual(
      [known.body.member_id, res.body.data.new['new-1@example.org'], res.body.data.new['new-2@example.org']].sort(),
    );
  });

  it('is safe to repeat: a second import finds everyone and records no new events', async () => {
    const users = [{ email: 'repeat-1@example.org' }, { email: 'repeat-2@example.org' }];
    const first = await signups(users);
    const [before] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events`;
    const second = await signups(users);
    expect(second.body.data).toEqual({ new: {}, found: first.body.data.new });
    const [after] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events`;
    expect(after!.n).toBe(before!.n);
  });

  it('rejects a subscribed_at that is not earlier than now, naming users.N.subscribed_at, and imports nothing', async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    const res = await signups([{ email: 'fine@example.org' }, { email: 'future@example.org', subscribed_at: future }]);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['users.1.subscribed_at']);
    expect(await t.db.sql`SELECT 1 FROM members WHERE email = 'fine@example.org'`).toHaveLength(0);
    expect((await signups([{ email: 'x@example.org', subscribed_at: 'last tuesday' }])).body.errors).toHaveProperty([
      'users.0.subscribed_at',
    ]);
    expect(
      (await signups([{ email: 'x@example.org', subscribed_at: '2026-02-30 10:00:00' }])).body.errors,
    ).toHaveProperty(['users.0.subscribed_at']);
  });

  it('validates users (1..2000, e-mail, names) and answers 404/403 across organizations and abilities', async () => {
    expect((await signups([])).body.errors).toHaveProperty('users');
    expect((await signups([{ email: 'nope' }])).body.errors).toHaveProperty(['users.0.email']);
    expect((await signups([{ email: 'a@example.org', first_name: 'x'.repeat(192) }])).body.errors).toHaveProperty([
      'users.0.first_name',
    ]);
    expect((await signups(Array.from({ length: 2001 }, (_, i) => ({ email: `u${i}@example.org` })))).status).toBe(422);
    expect((await signups([{ email: 'a@example.org' }], 'brand-acme', globex)).status).toBe(404);
    expect((await signups([{ email: 'a@example.org' }], 'brand-acme', readonly)).status).toBe(403);
  });

  it('keeps one member per e-mail when imports and creates of the same e-mails race', async () => {
    const users = Array.from({ length: 300 }, (_, i) => ({ email: `race-${i}@example.org` }));
    const results = await Promise.all([
      signups(users),
      signups(users.slice().reverse()),
      signups(users.slice(100)),
      call('POST', '/members', { brand_id: 'brand-list', email: 'RACE-5@example.org' }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, expect.any(Number)]);
    const ids = new Map<string, string>();
    for (const res of results.slice(0, 3)) {
      for (const [email, id] of Object.entries({ ...res.body.data.new, ...res.body.data.found })) {
        expect(ids.get(email) ?? id).toBe(id);
        ids.set(email, id as string);
      }
    }
    expect(ids.size).toBe(300);
    const news = results.slice(0, 3).reduce((n, r) => n + Object.keys(r.body.data.new).length, 0);
    expect(news).toBeLessThanOrEqual(300);
    const [count] = await t.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM members WHERE lower(email) LIKE 'race-%@example.org'`;
    expect(count!.n).toBe(300);
    const [links] = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM brand_members bm JOIN members m ON m.id = bm.member_id WHERE bm.brand_id = 'brand-list' AND lower(m.email) LIKE 'race-%'`;
    expect(links!.n).toBe(300);
  });

  it('imports 2000 users in one request', async () => {
    const users = Array.from({ length: 2000 }, (_, i) => ({ email: `bulk-${i}@example.org`, first_name: `U${i}` }));
    const res = await signups(users, 'brand-acme');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data.new)).toHaveLength(2000);
  });
});

describe('POST /members/list', () => {
  beforeAll(async () => {
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-list-2', 'org-acme', 'List 2') ON CONFLICT DO NOTHING`;
    await signups(
      Array.from({ length: 25 }, (_, i) => ({
        email: `l${String(i).padStart(2, '0')}@example.org`,
        first_name: `L${i}`,
        last_name: 'Ist',
      })),
      'brand-list-2',
    );
  });

  it('returns the whole list, streamed, when page and per_page are absent', async () => {
    const res = await call('POST', '/members/list', { brand_id: 'brand-list-2' });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Request successful');
    expect(res.body.data).toMatchObject({ total: 25, last_page: 1, next_page_url: null, per_page: 25 });
    expect(res.body.data.members).toHaveLength(25);
    expect(res.body.data.members[0]).toEqual({
      email: 'l00@example.org',
      full_name: 'L0 Ist',
      identifier: expect.any(String),
      unsubscribed: 0,
      last_name: 'Ist',
      phone_number: null,
      birth_date: null,
      street: null,
      house_number: null,
      postcode: null,
      city: null,
      country: null,
      subscribed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
  });

  it('paginates with page/per_page as numbers or strings', async () => {
    const page2 = await call('POST', '/members/list', { brand_id: 'brand-list-2', page: '2', per_page: 10 });
    expect(page2.body.data).toMatchObject({
      total: 25,
      last_page: 3,
      per_page: 10,
      next_page_url: `${t.server.info.uri}/members/list?page=3`,
      last_page_url: `${t.server.info.uri}/members/list?page=3`,
    });
    expect(page2.body.data.members.map((m: Json) => m.email)).toEqual(
      Array.from({ length: 10 }, (_, i) => `l${10 + i}@example.org`),
    );
    const last = await call('POST', '/members/list', { brand_id: 'brand-list-2', page: 3, per_page: '10' });
    expect(last.body.data.members).toHaveLength(5);
    expect(last.body.data.next_page_url).toBeNull();
    const onlyPage = await call('POST', '/members/list', { brand_id: 'brand-list-2', page: 1 });
    expect(onlyPage.body.data).toMatchObject({ per_page: 100, last_page: 1 });
    expect(onlyPage.body.data.members).toHaveLength(25);
  });

  it('shows unsubscribed as 0/1', async () => {
    const res = await signups([{ email: 'unsub-list@example.org', unsubscribed: true }], 'brand-list');
    expect(res.status).toBe(200);
    const all = await call('POST', '/members/list', { brand_id: 'brand-list' });
    expect(all.body.data.members.find((m: Json) => m.email === 'unsub-list@example.org').unsubscribed).toBe(1);
  });

  it('validates page and per_page (1..1000) and scopes the brand', async () => {
    expect(
      (await call('POST', '/members/list', { brand_id: 'brand-list-2', per_page: 1001 })).body.errors,
    ).toHaveProperty('per_page');
    expect((await call('POST', '/members/list', { brand_id: 'brand-list-2', page: 0 })).body.errors).toHaveProperty(
      'page',
    );
    expect((await call('POST', '/members/list', { brand_id: 'brand-list-2', page: 'two' })).status).toBe(422);
    expect((await call('POST', '/members/list', {})).body.errors).toHaveProperty('brand_id');
    expect((await call('POST', '/members/list', { brand_id: 'brand-list-2' }, globex)).status).toBe(404);
    const noAbility = await t.auth('acme-admin', ['members.store']);
    expect((await call('POST', '/members/list', { brand_id: 'brand-list-2' }, noAbility)).status).toBe(403);
    expect((await call('POST', '/members/list', { brand_id: 'brand-list-2' }, readonly)).status).toBe(200);
  });

  it('streams a list far larger than one cursor batch and the stream buffers, in join order', async () => {
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-big', 'org-acme', 'Big') ON CONFLICT DO NOTHING`;
    await t.db.sql`
      WITH m AS (
        INSERT INTO members (organization_id, email, first_name)
        SELECT 'org-acme', 'big-' || i || '@example.org', repeat('n', 150) FROM generate_series(1, 3500) i RETURNING id, email
      )
      INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-big', id FROM m ORDER BY split_part(split_part(email, '@', 1), '-', 2)::int`;
    const res = await call('POST', '/members/list', { brand_id: 'brand-big' });
    expect(res.body.data).toMatchObject({ total: 3500, per_page: 3500, last_page: 1 });
    expect(res.body.data.members.map((m: Json) => m.email)).toEqual(
      Array.from({ length: 3500 }, (_, i) => `big-${i + 1}@example.org`),
    );
  });

  it('answers names with backslashes, quotes, newlines and other scripts exactly, streamed and paged', async () => {
    // Inserted directly (the edge refuses some of these): what the list must answer as stored. The
    // e-mails stay of the format openapi.yaml declares.
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-odd', 'org-acme', 'Odd') ON CONFLICT DO NOTHING`;
    const odd = [
      { email: "o'brien+{tag}@example.org", first_name: 'a\\b "q" \\"', last_name: 'line\nbreak\ttab\r\\n' },
      { email: 'unicode-names@example.org', first_name: 'Zoë 😀 \u2028', last_name: '名前 \\u0041 \u0001' },
      { email: 'end-backslash@example.org', first_name: '\\', last_name: '\\\\' },
    ];
    for (const m of odd)
      await t.db.sql`
        WITH m AS (
          INSERT INTO members (organization_id, email, first_name, last_name)
          VALUES ('org-acme', ${m.email}, ${m.first_name}, ${m.last_name}) RETURNING id
        )
        INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-odd', id FROM m`;
    const expected = odd.map((m) => ({
      email: m.email,
      full_name: `${m.first_name} ${m.last_name}`,
      last_name: m.last_name,
    }));
    for (const body of [{ brand_id: 'brand-odd' }, { brand_id: 'brand-odd', page: 1, per_page: 10 }]) {
      const res = await call('POST', '/members/list', body);
      expect(res.status).toBe(200);
      expect(res.body.data.members).toEqual(expected.map((e) => expect.objectContaining(e)));
    }
  });

  it('streams an empty brand as a valid envelope', async () => {
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-empty', 'org-acme', 'Empty') ON CONFLICT DO NOTHING`;
    const res = await call('POST', '/members/list', { brand_id: 'brand-empty' });
    expect(res.body.data).toMatchObject({ total: 0, last_page: 1, per_page: 0, members: [] });
  });
});

describe('POST /import/export', () => {
  it('lists one row per storecard pass with points and code; members without one are left out', async () => {
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-export', 'org-acme', 'Export') ON CONFLICT DO NOTHING`;
    await t.db
      .sql`INSERT INTO storecards (id, organization_id, brand_id, title) VALUES ('card-export', 'org-acme', 'brand-export', 'Export card') ON CONFLICT DO NOTHING`;
    await t.db
      .sql`INSERT INTO storecards (id, organization_id, brand_id, title) VALUES ('card-export-2', 'org-acme', 'brand-export', 'Second card') ON CONFLICT DO NOTHING`;
    const res = await signups(
      [{ email: 'ex-a@example.org', first_name: 'Ex', last_name: 'A' }, { email: 'ex-b@example.org' }],
      'brand-export',
    );
    const a = res.body.data.new['ex-a@example.org'];
    const pass = await call('POST', `/members/${a}/passes`, { brand_id: 'brand-export', storecard_id: 'card-export' });
    await call('POST', `/members/${a}/passes`, { brand_id: 'brand-export', storecard_id: 'card-export-2' });
    await call('POST', '/passes/scan/storecard', {
      pass_code: pass.body.pass_code,
      type: 'earn',
      points: 42,
      transaction_reference: 'ex-1',
    });

    const all = await call('POST', '/import/export', { brand_id: 'brand-export' });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    const one = await call('POST', '/import/export', { brand_id: 'brand-export', storecard_id: 'card-export' });
    expect(one.body).toEqual({
      success: true,
      data: [{ email: 'ex-a@example.org', name: 'Ex A', points: 42, qr_code: pass.body.pass_code }],
    });
  });

  it('answers 404 for a storecard of another brand or organization, 403 without members.store', async () => {
    expect((await call('POST', '/import/export', { brand_id: 'brand-acme', storecard_id: 'card-nope' })).status).toBe(
      404,
    );
    expect((await call('POST', '/import/export', { brand_id: 'brand-acme' }, globex)).status).toBe(404);
    expect((await call('POST', '/import/export', { brand_id: 'brand-acme' }, readonly)).status).toBe(403);
    expect((await call('POST', '/import/export', { storecard_id: 5 })).status).toBe(422);
  });
});
