import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, type TestServer } from '#test-helpers/server.js';
import { sha256 } from '../lib/hash.js';
import { claimDueDeliveries } from '../services/webhooks/deliveries-claim.js';
import { fanOutEvents } from '../services/webhooks/deliveries.js';
import { recordEvents } from '../services/webhooks/events.js';
import { claimIdempotencyKey, storeIdempotentResponse } from '../services/platform/idempotency.js';

// Issue 25: the sandbox clock is per organization. Moving acme's clock leaves globex's pass
// statuses, tokens, Idempotency-Keys, promotion windows, delivery due times and rotation overlap
// as they were; the clock's bounds are checked in the statement that moves it; readiness reads it.

let t: TestServer;
const ABILITIES = ['tags.get', 'tags.store', 'members.get', 'members.store', 'passes.store', 'webhooks.get'];
const MANAGE = [...ABILITIES, 'webhooks.store', 'sandbox.manage'];
beforeAll(async () => {
  t = await createTestServer({ sandbox: true });
  const sql = t.db.sql;
  await sql`UPDATE clients SET abilities = array_append(abilities, 'sandbox.manage')
            WHERE client_id IN ('acme-admin', 'globex-admin') AND NOT 'sandbox.manage' = ANY(abilities)`;
  await sql`INSERT INTO organizations (id, name) VALUES ('org-initech', 'Initech')`;
  await sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-initech', 'org-initech', 'Initech')`;
  await sql`INSERT INTO coupons (id, brand_id, organization_id, title, external_reference, valid_days, active)
            VALUES ('coupon-initech', 'brand-initech', 'org-initech', 'Initech 30 days', 'INI30', 30, true)`;
  for (const [id, orgs] of [
    ['initech-admin', ['org-initech']],
    ['multi-admin', ['org-acme', 'org-initech']],
  ] as const)
    await sql`INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
              VALUES (${id}, ${sha256(`${id}-secret`)}, ${[...orgs]}, ${MANAGE})`;
  await sql`
    INSERT INTO promotions (id, organization_id, title, active, starts_at, ends_at) VALUES
      ('aaaaaaaa-1111-4111-8111-111111111111', 'org-acme', 'Ten days', true, now() - interval '1 day', now() + interval '10 days'),
      ('bbbbbbbb-2222-4222-8222-222222222222', 'org-globex', 'Ten days', true, now() - interval '1 day', now() + interval '10 days')`;
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const newToken = (client: string) => t.newToken(client);
/** A request as the client, with a token of its own issued before its organization's clock moved last. */
const tokens = new Map<string, string>();
const call = async (client: string, method: string, url: string, payload?: unknown) => {
  const token = tokens.get(client) ?? (await newToken(client));
  tokens.set(client, token);
  const res = await t.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload !== undefined && { payload: payload as object }),
  });
  if (method === 'POST' && url === '/sandbox/clock' && res.statusCode === 200) tokens.clear();
  return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
};
const offsetOf = async (org: string) =>
  (await t.db.sql<{ s: number }[]>`SELECT offset_seconds AS s FROM sandbox_clocks WHERE organization_id = ${org}`)[0]
    ?.s ?? 0;

describe('one clock per organization', () => {
  it("acme's advance of 40 days leaves every clock-following thing of globex as it was", async () => {
    const sql = t.db.sql;
    // globex: a member with a 14-day coupon pass, a token, a stored Idempotency-Key, a subscription
    // with its secret rotated and two deliveries (one due now, one due in an hour)
    const member = await call('globex-admin', 'POST', '/members', { brand_id: 'brand-globex', email: 'g@example.org' });
    expect(member.status).toBe(201);
    const globexPass = await call('globex-admin', 'POST', `/members/${member.body.member_id}/passes`, {
      brand_id: 'brand-globex',
      coupon_id: 'coupon-globex',
    });
    expect(globexPass.status).toBe(201);
    const acmeMember = await call('acme-admin', 'POST', '/members', { brand_id: 'brand-acme', email: 'a@example.org' });
    const acmePass = await call('acme-admin', 'POST', `/members/${acmeMember.body.member_id}/passes`, {
      brand_id: 'brand-acme',
      coupon_id: 'coupon-welcome',
    });
    expect(acmePass.status).toBe(201);
    const globexToken = await newToken('globex-admin');
    const acmeToken = await newToken('acme-admin');
    // both tokens in the resolver's cache: after the move, the process clock decides their expiry
    for (const [token, brand] of [
      [acmeToken, 'brand-acme'],
      [globexToken, 'brand-globex'],
    ] as const)
      expect(
        (await t.inject({ method: 'GET', url: `/tags?brand_id=${brand}`, headers: bearer(token) })).statusCode,
      ).toBe(200);
    const keys = { globex: randomBytes(32), acme: randomBytes(32) };
    const request = randomBytes(32);
    for (const [org, scope] of [
      ['org-globex', keys.globex],
      ['org-acme', keys.acme],
    ] as const) {
      expect((await claimIdempotencyKey(sql, { scope, request, lockSeconds: 30, organizationIds: [org] })).kind).toBe(
        'claimed',
      );
      await storeIdempotentResponse(sql, scope, { status: 201, headers: {}, body: '{}' });
    }
    const subs: Record<string, string> = {};
    for (const [client, org] of [
      ['globex-admin', 'org-globex'],
      ['acme-admin', 'org-acme'],
    ] as const) {
      const sub = await call(client, 'POST', '/webhook-subscriptions', {
        url: `https://hooks.${org}.test/h`,
        events: ['member.created'],
      });
      expect(sub.status).toBe(201);
      subs[org] = sub.body.data.id;
      expect((await call(client, 'POST', `/webhook-subscriptions/${sub.body.data.id}/rotate-secret`)).status).toBe(200);
      const ids = await sql.begin((tx) =>
        recordEvents(
          tx,
          [1, 2].map(() => ({
            organizationId: org,
            type: 'member.created' as const,
            data: { member_id: crypto.randomUUID(), brand_id: 'b' },
          })),
        ),
      );
      await fanOutEvents(sql, ids, 1);
      await sql`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE event_id = ${ids[1] as string}`;
    }
    await sql`DELETE FROM graphile_worker._private_jobs`;

    const moved = await call('acme-admin', 'POST', '/sandbox/clock', { advance: '40d' });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toMatchObject({ organization_id: 'org-acme', offset_seconds: 40 * 86_400 });
    expect(await offsetOf('org-globex')).toBe(0);
    const globexClock = await call('globex-admin', 'GET', '/sandbox/clock');
    expect(globexClock.body.data).toMatchObject({ organization_id: 'org-globex', offset_seconds: 0 });

    // tokens: acme's token lived an hour of acme's time, globex's lives on
    expect(
      (await t.inject({ method: 'GET', url: '/tags?brand_id=brand-acme', headers: bearer(acmeToken) })).statusCode,
    ).toBe(401);
    expect(
      (await t.inject({ method: 'GET', url: '/tags?brand_id=brand-globex', headers: bearer(globexToken) })).statusCode,
    ).toBe(200);
    // pass statuses
    const statusOf = async (client: string, brand: string, memberId: string, code: string) =>
      (await call(client, 'GET', `/members/${memberId}/coupons?brand_id=${brand}`)).body.data.find(
        (p: { qr_code: string }) => p.qr_code === code,
      ).status;
    expect(await statusOf('globex-admin', 'brand-globex', member.body.member_id, globexPass.body.pass_code)).toBe(
      'active',
    );
    expect(await statusOf('acme-admin', 'brand-acme', acmeMember.body.member_id, acmePass.body.pass_code)).toBe(
      'expired',
    );
    // Idempotency-Keys: globex's replays, acme's 24 hours are over
    expect((await claimIdempotencyKey(sql, { scope: keys.globex, request, lockSeconds: 30 })).kind).toBe('replay');
    expect((await claimIdempotencyKey(sql, { scope: keys.acme, request, lockSeconds: 30 })).kind).toBe('claimed');
    // promotions' windows
    const promoted = await sql<{ organization_id: string; active_now: boolean }[]>`
      SELECT organization_id, (active AND starts_at <= loyalty_now(organization_id) AND loyalty_now(organization_id) < ends_at) AS active_now
      FROM promotions WHERE title = 'Ten days' ORDER BY organization_id`;
    expect(promoted).toEqual([
      { organization_id: 'org-acme', active_now: false },
      { organization_id: 'org-globex', active_now: true },
    ]);
    // deliveries: globex's later one is not due, its rotation overlap still signs twice
    const globexDue = await claimDueDeliveries(sql, subs['org-globex'] as string, 10, 30);
    expect(globexDue).toHaveLength(1);
    expect(globexDue[0]?.secrets).toHaveLength(2);
    const acmeDue = await claimDueDeliveries(sql, subs['org-acme'] as string, 10, 30);
    expect(acmeDue).toHaveLength(2);
    expect(acmeDue[0]?.secrets).toHaveLength(1);
    // moving acme's clock woke acme's lanes only
    const woken = await sql<{ key: string }[]>`SELECT key FROM graphile_worker._private_jobs WHERE key IS NOT NULL`;
    expect(woken.some((j) => j.key.includes(subs['org-acme'] as string))).toBe(true);
    expect(woken.some((j) => j.key.includes(subs['org-globex'] as string))).toBe(false);
  });

  it('a token with several organizations names the one it moves (422 naming organization_id otherwise)', async () => {
    for (const [method, url, payload] of [
      ['GET', '/sandbox/clock', undefined],
      ['POST', '/sandbox/clock', { advance: '1h' }],
      ['GET', '/sandbox/clock?organization_id=org-globex', undefined],
      ['POST', '/sandbox/clock', { advance: '1h', organization_id: 'org-globex' }],
    ] as const) {
      const res = await call('multi-admin', method, url, payload);
      expect(res.status, `${method} ${url} ${JSON.stringify(payload)}`).toBe(422);
      expect(res.body.errors).toHaveProperty('organization_id');
    }
    const before = await offsetOf('org-acme');
    const moved = await call('multi-admin', 'POST', '/sandbox/clock', {
      advance: '1h',
      organization_id: 'org-initech',
    });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ organization_id: 'org-initech', offset_seconds: 3600 });
    const read = await call('multi-admin', 'GET', '/sandbox/clock?organization_id=org-initech');
    expect(read.body.data).toMatchObject({ organization_id: 'org-initech', offset_seconds: 3600 });
    expect(await offsetOf('org-acme')).toBe(before);
  });
});

describe('bounds', () => {
  it('an advance or a set beyond 10 years ahead is a 422 naming the field and changes nothing', async () => {
    const before = await offsetOf('org-initech');
    for (const [payload, field] of [
      [{ advance: '999999999d' }, 'advance'],
      [{ advance: '3653d' }, 'advance'],
      [{ set: '9999-12-31T00:00:00Z' }, 'set'],
      [{ set: '2999-01-01T00:00:00Z' }, 'set'],
    ] as const) {
      const res = await call('initech-admin', 'POST', '/sandbox/clock', payload);
      expect(res.status, JSON.stringify(payload)).toBe(422);
      expect(res.body.errors).toHaveProperty(field);
      expect(await offsetOf('org-initech')).toBe(before);
    }
    // close to the cap: moves, then one more day is too much; issuing a pass still works
    const near = await call('initech-admin', 'POST', '/sandbox/clock', { advance: '3650d' });
    expect(near.status, JSON.stringify(near.body)).toBe(200);
    const over = await call('initech-admin', 'POST', '/sandbox/clock', { advance: '3d' });
    expect(over.status).toBe(422);
    expect(over.body.errors).toHaveProperty('advance');
    const member = await call('initech-admin', 'POST', '/members', {
      brand_id: 'brand-initech',
      email: 'i@example.org',
    });
    expect(member.status, JSON.stringify(member.body)).toBe(201);
    const pass = await call('initech-admin', 'POST', `/members/${member.body.member_id}/passes`, {
      brand_id: 'brand-initech',
      coupon_id: 'coupon-initech',
    });
    expect(pass.status, JSON.stringify(pass.body)).toBe(201);
    const today = (await call('initech-admin', 'GET', '/sandbox/clock')).body.data.now.slice(0, 10);
    expect(today >= '2036-01-01').toBe(true);
    const [row] = await t.db.sql<{ start_date: string }[]>`
      SELECT start_date::text FROM passes WHERE pass_code = ${pass.body.pass_code}`;
    expect(row?.start_date).toBe(today);
  });

  it('readiness evaluates the clock: 200 with a valid one, 503 naming the clock when it cannot be read', async () => {
    const ready = async () => {
      const res = await t.server.inject({ method: 'GET', url: '/health/ready' });
      return { status: res.statusCode, body: JSON.parse(res.payload) as Json };
    };
    expect(await ready()).toMatchObject({ status: 200, body: { checks: { clock: 'ok' } } });
    const sql = t.db.sql;
    // A clock that no statement can evaluate (what the cap now prevents): readiness says so.
    await sql`ALTER TABLE sandbox_clocks DROP CONSTRAINT sandbox_clocks_offset_seconds_check`;
    await sql`UPDATE sandbox_clocks SET offset_seconds = 1e15 WHERE organization_id = 'org-initech'`;
    try {
      const broken = await ready();
      expect(broken.status).toBe(503);
      expect(broken.body.checks).toMatchObject({ database: 'ok', clock: 'down' });
    } finally {
      await sql`UPDATE sandbox_clocks SET offset_seconds = 0 WHERE organization_id = 'org-initech'`;
    }
  });
});
