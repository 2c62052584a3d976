import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { sha256 } from '../lib/hash.js';

let t: TestServer;
let strict: TestServer;
beforeAll(async () => {
  [t, strict] = await Promise.all([createTestServer(), createTestServer({ webhookAllowInsecure: false })]);
  // A client with two organizations (the fixtures have none).
  for (const server of [t, strict]) {
    await server.db.sql`
      INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
      VALUES ('multi', ${sha256('multi-secret')}, '{org-acme,org-globex}', '{webhooks.get,webhooks.store}')`;
  }
});
afterAll(() => Promise.all([t.close(), strict.close()]));

type Subscription = {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  secret?: string;
};
const create = async (server: TestServer, payload: Record<string, unknown>, client = 'acme-admin') =>
  server.inject({ method: 'POST', url: '/webhook-subscriptions', payload, headers: await server.auth(client) });
const list = async (server: TestServer, client = 'acme-admin', query = '') =>
  server.inject({ method: 'GET', url: `/webhook-subscriptions${query}`, headers: await server.auth(client) });

describe('webhook subscriptions', () => {
  it('creates (201, secret once), lists without the secret, and deletes', async () => {
    const res = await create(t, {
      url: 'https://hooks.acme.test/a',
      events: ['member.created', 'coupon.issued', 'member.created'],
      secret: 'whsec_mine',
    });
    expect(res.statusCode).toBe(201);
    const sub = (res.result as { message: string; data: Subscription }).data;
    expect(sub).toMatchObject({
      organization_id: 'org-acme',
      url: 'https://hooks.acme.test/a',
      events: ['member.created', 'coupon.issued'],
      active: true,
    });
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(sub.secret).not.toBe('whsec_mine');
    expect(sub.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const listed = (await list(t)).result as { message: string; data: Subscription[] };
    const mine = listed.data.find((s) => s.id === sub.id)!;
    expect(mine).toBeDefined();
    expect(mine).not.toHaveProperty('secret');
    expect(JSON.stringify(listed)).not.toContain(sub.secret!);

    const del = await t.inject({
      method: 'DELETE',
      url: `/webhook-subscriptions/${sub.id}`,
      headers: await t.auth('acme-admin'),
    });
    expect(del.statusCode).toBe(200);
    expect(del.result).toEqual({ message: 'Request successful', data: { id: sub.id, deleted: true } });
    expect(((await list(t)).result as { data: Subscription[] }).data.some((s) => s.id === sub.id)).toBe(false);
    const again = await t.inject({
      method: 'DELETE',
      url: `/webhook-subscriptions/${sub.id}`,
      headers: await t.auth('acme-admin'),
    });
    expect(again.statusCode).toBe(404);
  });

  it('never lists, deletes, rotates or shows the log of another organization’s subscription', async () => {
    const foreign = (
      (await create(t, { url: 'https://hooks.globex.test/a', events: ['member.created'] }, 'globex-admin')).result as {
        data: Subscription;
      }
    ).data;
    expect(((await list(t)).result as { data: Subscription[] }).data.some((s) => s.id === foreign.id)).toBe(false);
    const acme = await t.auth('acme-admin');
    for (const [method, url] of [
      ['DELETE', `/webhook-subscriptions/${foreign.id}`],
      ['POST', `/webhook-subscriptions/${foreign.id}/rotate-secret`],
      ['GET', `/webhook-subscriptions/${foreign.id}/deliveries`],
      ['POST', `/webhook-subscriptions/${foreign.id}/deliveries/8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d/retry`],
    ] as const) {
      expect((await t.inject({ method, url, headers: acme })).statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await list(t, 'acme-admin', '?organization_id=org-globex')).statusCode).toBe(404);
    expect(((await list(t, 'globex-admin')).result as { data: Subscription[] }).data.map((s) => s.id)).toContain(
      foreign.id,
    );
  });

  it('rejects unknown events and invalid urls with 422', async () => {
    for (const payload of [
      { url: 'https://hooks.acme.test/a', events: ['member.deleted'] },
      { url: 'https://hooks.acme.test/a', events: [] },
      { url: 'https://hooks.acme.test/a' },
      { events: ['member.created'] },
      { url: 'not a url', events: ['member.created'] },
      { url: 'https://user:pw@hooks.acme.test/a', events: ['member.created'] },
    ]) {
      const res = await create(t, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
    }
  });

  it('accepts only https on a public host outside development mode', async () => {
    for (const url of [
      'http://hooks.acme.test/a',
      'https://localhost/a',
      'https://127.0.0.1/a',
      'https://10.0.0.8/a',
      'https://[::1]/a',
      'https://169.254.169.254/a',
      'https://a:b@hooks.acme.test/a',
    ]) {
      const res = await create(strict, { url, events: ['member.created'] });
      expect(res.statusCode, url).toBe(422);
      expect(res.result).toMatchObject({ error: 'validation_failed', errors: { url: [expect.any(String)] } });
    }
    expect((await create(strict, { url: 'https://8.8.8.8/hook', events: ['member.created'] })).statusCode).toBe(201);
    // Development mode: http and loopback are fine.
    expect((await create(t, { url: 'http://127.0.0.1:9/hook', events: ['member.created'] })).statusCode).toBe(201);
  });

  it('accepts port 443 or an unlisted port from 1024 up, naming the url field otherwise', async () => {
    for (const url of [
      'https://hooks.acme.test:0/a',
      'https://hooks.acme.test:22/a',
      'https://hooks.acme.test:80/a',
      'https://hooks.acme.test:6379/a',
      'https://8.8.8.8:5432/a',
      'https://8.8.8.8:11211/a',
    ]) {
      const res = await create(strict, { url, events: ['member.created'] });
      expect(res.statusCode, url).toBe(422);
      expect(res.result).toMatchObject({
        error: 'validation_failed',
        errors: { url: [expect.stringContaining('port 443')] },
      });
    }
    expect((await create(strict, { url: 'https://8.8.8.8:8443/hook', events: ['member.created'] })).statusCode).toBe(
      201,
    );
  });

  it('in development mode keeps port 80, and any port on a loopback or private address only', async () => {
    for (const url of ['http://8.8.8.8:6379/a', 'https://8.8.8.8:22/a', 'http://nx.invalid:5432/a']) {
      const res = await create(t, { url, events: ['member.created'] });
      expect(res.statusCode, url).toBe(422);
      expect(res.result).toMatchObject({ errors: { url: [expect.stringContaining('port 443')] } });
    }
    for (const url of ['http://8.8.8.8/hook', 'http://127.0.0.1:6379/hook'])
      expect((await create(t, { url, events: ['member.created'] })).statusCode, url).toBe(201);
  });

  it('needs organization_id when the token has several organizations', async () => {
    const missing = await create(t, { url: 'https://hooks.multi.test/a', events: ['member.created'] }, 'multi');
    expect(missing.statusCode).toBe(422);
    expect(missing.result).toMatchObject({ errors: { organization_id: [expect.any(String)] } });
    const made = await create(
      t,
      { url: 'https://hooks.multi.test/a', events: ['member.created'], organization_id: 'org-globex' },
      'multi',
    );
    expect(made.statusCode).toBe(201);
    expect((made.result as { data: Subscription }).data.organization_id).toBe('org-globex');
    expect(
      (
        await create(
          t,
          { url: 'https://hooks.multi.test/a', events: ['member.created'], organization_id: 'org-other' },
          'multi',
        )
      ).statusCode,
    ).toBe(404);
    // Listing without organization_id shows every organization of the token; with it, one.
    const all = ((await list(t, 'multi')).result as { data: Subscription[] }).data;
    expect(new Set(all.map((s) => s.organization_id))).toEqual(new Set(['org-acme', 'org-globex']));
    const one = ((await list(t, 'multi', '?organization_id=org-globex')).result as { data: Subscription[] }).data;
    expect(one.every((s) => s.organization_id === 'org-globex')).toBe(true);
  });

  it('allows at most 20 subscriptions per organization, also under concurrent creation', async () => {
    const server = strict;
    const existing = ((await list(server, 'globex-admin')).result as { data: Subscription[] }).data.length;
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        create(server, { url: `https://8.8.8.8/hook-${i}`, events: ['coupon.issued'] }, 'globex-admin'),
      ),
    );
    const created = results.filter((r) => r.statusCode === 201).length;
    expect(created).toBe(20 - existing);
    const refused = results.filter((r) => r.statusCode === 422);
    expect(refused.length).toBe(25 - created);
    expect(refused[0]!.result).toMatchObject({ error: 'subscription_limit_reached' });
    expect(((await list(server, 'globex-admin')).result as { data: Subscription[] }).data).toHaveLength(20);
  });

  it('answers 403 without the ability and 401 without a token', async () => {
    const sub = (
      (await create(t, { url: 'https://hooks.acme.test/b', events: ['member.created'] })).result as {
        data: Subscription;
      }
    ).data;
    const readonly = await t.auth('acme-readonly');
    const noWebhooks = await t.auth('acme-admin', ['tags.get']);
    const cases = [
      ['GET', '/webhook-subscriptions', noWebhooks],
      ['POST', '/webhook-subscriptions', readonly],
      ['DELETE', `/webhook-subscriptions/${sub.id}`, readonly],
      ['POST', `/webhook-subscriptions/${sub.id}/rotate-secret`, readonly],
      ['GET', `/webhook-subscriptions/${sub.id}/deliveries`, noWebhooks],
      ['POST', `/webhook-subscriptions/${sub.id}/deliveries/8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d/retry`, readonly],
      ['GET', '/events', noWebhooks],
    ] as const;
    for (const [method, url, headers] of cases) {
      const payload =
        method === 'POST' && url === '/webhook-subscriptions'
          ? { url: 'https://hooks.acme.test/c', events: ['member.created'] }
          : undefined;
      expect((await t.inject({ method, url, headers, payload })).statusCode, `${method} ${url}`).toBe(403);
      expect((await t.inject({ method, url, payload })).statusCode, `${method} ${url}`).toBe(401);
    }
    // webhooks.get is enough to read.
    expect(
      (await t.inject({ method: 'GET', url: `/webhook-subscriptions/${sub.id}/deliveries`, headers: readonly }))
        .statusCode,
    ).toBe(200);
  });
});

describe('delivery log', () => {
  it('pages newest first with a cursor and filters by status; retry of an unknown delivery is a 404', async () => {
    const sub = (
      (await create(t, { url: 'https://hooks.acme.test/log', events: ['member.created'] })).result as {
        data: Subscription;
      }
    ).data;
    await t.db.sql`
      INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, status, attempts, next_attempt_at)
      SELECT ${sub.id}, gen_random_uuid(), 'member.created', CASE WHEN i % 2 = 0 THEN 'failed' ELSE 'delivered' END, 1, NULL
      FROM generate_series(1, 5) i`;
    const get = async (query: string) => {
      const res = await t.inject({
        method: 'GET',
        url: `/webhook-subscriptions/${sub.id}/deliveries${query}`,
        headers: await t.auth('acme-readonly'),
      });
      expect(res.statusCode, res.payload).toBe(200);
      return res.result as { data: { id: string; status: string }[]; next_cursor: string | null };
    };
    const first = await get('?limit=2');
    expect(first.data).toHaveLength(2);
    expect(first.next_cursor).not.toBeNull();
    const second = await get(`?limit=2&after=${first.next_cursor}`);
    const third = await get(`?limit=2&after=${second.next_cursor}`);
    expect(third.next_cursor).toBeNull();
    const ids = [...first.data, ...second.data, ...third.data].map((d) => d.id);
    expect(new Set(ids).size).toBe(5);
    const { newest } = (
      await t.db.sql<
        { newest: string }[]
      >`SELECT id AS newest FROM webhook_deliveries WHERE subscription_id = ${sub.id} ORDER BY seq DESC LIMIT 1`
    )[0]!;
    expect(ids[0]).toBe(newest);
    expect((await get('?status=failed')).data.map((d) => d.status)).toEqual(['failed', 'failed']);
    expect(
      (
        await t.inject({
          method: 'GET',
          url: `/webhook-subscriptions/${sub.id}/deliveries?after=zzz`,
          headers: await t.auth('acme-admin'),
        })
      ).statusCode,
    ).toBe(422);
    const retry = await t.inject({
      method: 'POST',
      url: `/webhook-subscriptions/${sub.id}/deliveries/8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d/retry`,
      headers: await t.auth('acme-admin'),
    });
    expect(retry.statusCode).toBe(404);
  });
});
