import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, type TestServer } from '#test-helpers/server.js';
import { TEST_FIXTURES } from '#test-helpers/test-fixtures.js';
import { sha256 } from '../lib/hash.js';
import { readMemberCount } from '../services/members/member-counts.js';

// Issue 25: POST /sandbox/reset resets only the caller's organizations (sandbox.manage), without
// blocking or changing another organization; the whole server only with the operator's credential.

const OPERATOR = 'operator-credential-of-this-test-0123456789';

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true, sandboxOperatorToken: OPERATOR });
  // createTestServer loads no fixture file; a reset loads this one again (the server's config object):
  // the demo fixtures without their records, as the template holds them.
  t.config.fixtures = TEST_FIXTURES;
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const newToken = (client: string) => t.newToken(client);
const call = async (token: string, method: string, url: string, payload?: unknown) => {
  const res = await t.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload !== undefined && { payload: payload as object }),
  });
  return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
};
const count = async (table: string, org: string) =>
  (await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${t.db.sql(table)} WHERE organization_id = ${org}`)[0]
    ?.n;

describe('who may steer the sandbox', () => {
  it('read-only and device tokens get 403 on the clock and the reset; the admin may', async () => {
    const readonly = await newToken('acme-readonly');
    const device = await newToken('acme-pos-1');
    for (const token of [readonly, device]) {
      expect((await call(token, 'GET', '/sandbox/clock')).status).toBe(403);
      expect((await call(token, 'POST', '/sandbox/clock', { advance: '1d' })).status).toBe(403);
      expect((await call(token, 'POST', '/sandbox/reset')).status).toBe(403);
    }
    expect((await call(await newToken('acme-admin'), 'GET', '/sandbox/clock')).status).toBe(200);
  });
});

describe('POST /sandbox/reset of the caller', () => {
  it("deletes acme's data and tokens only; globex's requests run meanwhile and see no change", async () => {
    const acme = await newToken('acme-admin');
    const globex = await newToken('globex-admin');
    for (let i = 0; i < 3; i++) {
      expect((await call(acme, 'POST', '/members', { brand_id: 'brand-acme', email: `a${i}@acme.test` })).status).toBe(
        201,
      );
      expect(
        (await call(globex, 'POST', '/members', { brand_id: 'brand-globex', email: `g${i}@globex.test` })).status,
      ).toBe(201);
    }
    for (const [token, host] of [
      [acme, 'acme'],
      [globex, 'globex'],
    ] as const)
      expect(
        (
          await call(token, 'POST', '/webhook-subscriptions', {
            url: `https://hooks.${host}.test/a`,
            events: ['member.created'],
          })
        ).status,
      ).toBe(201);
    const globexMembers = await count('members', 'org-globex');
    const globexSubscriptions = await count('webhook_subscriptions', 'org-globex');

    // Hold one of acme's members: the reset waits at its row, holding what it has deleted so far.
    const holder = await t.db.sql.reserve();
    await holder`BEGIN`;
    await holder`SELECT id FROM members WHERE organization_id = 'org-acme' LIMIT 1 FOR UPDATE`;
    const reset = call(acme, 'POST', '/sandbox/reset');
    try {
      await waitFor(
        async () => (await t.db.sql`SELECT 1 FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()`).length > 0,
      );
      // While the reset is under way, globex works as usual (each within a few seconds, not after the reset).
      const during = await Promise.all([
        within(call(globex, 'GET', '/events')),
        within(call(globex, 'POST', '/members', { brand_id: 'brand-globex', email: 'during@globex.test' })),
        within(call(globex, 'GET', '/webhook-subscriptions')),
        within(call(globex, 'GET', '/tags?brand_id=brand-globex')),
        within(newToken('globex-admin').then(() => ({ status: 200 }))),
      ]);
      expect(during.map((r) => r.status)).toEqual([200, 201, 200, 200, 200]);
    } finally {
      await holder`ROLLBACK`;
      holder.release();
    }
    const done = await reset;
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data).toMatchObject({ scope: 'organizations', organization_ids: ['org-acme'] });

    expect(await count('members', 'org-acme')).toBe(0);
    expect(await count('webhook_subscriptions', 'org-acme')).toBe(0);
    expect(await count('members', 'org-globex')).toBe((globexMembers ?? 0) + 1);
    expect(await count('webhook_subscriptions', 'org-globex')).toBe(globexSubscriptions);
    // acme's tokens are revoked, globex's still work; acme's clients came back from the fixture file.
    expect((await call(acme, 'GET', '/tags?brand_id=brand-acme')).status).toBe(401);
    expect((await call(globex, 'GET', '/tags?brand_id=brand-globex')).status).toBe(200);
    expect((await call(await newToken('acme-admin'), 'GET', '/tags?brand_id=brand-acme')).status).toBe(200);
    expect((await t.db.sql`SELECT 1 FROM coupons WHERE id = 'coupon-welcome'`).length).toBe(1);
  });

  it("keeps the brand's member count exact and its version moving on (never an earlier one)", async () => {
    const acme = await newToken('acme-admin');
    const version = async () => (await readMemberCount(t.db.sql, 'brand-acme')).version;
    const seen = [await version()];
    expect((await call(acme, 'POST', '/members', { brand_id: 'brand-acme', email: 'count@acme.test' })).status).toBe(
      201,
    );
    seen.push(await version());
    expect((await call(acme, 'POST', '/sandbox/reset')).status).toBe(200);
    const after = await readMemberCount(t.db.sql, 'brand-acme');
    expect(after.total).toBe(0);
    expect(seen).not.toContain(after.version);
  });

  it("answers the one organization's clock, or for several the real time of no one organization", async () => {
    const abilities = ['tags.get', 'sandbox.manage'];
    await t.db.sql`INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
      VALUES ('acme-globex-admin', ${sha256('acme-globex-admin-secret')}, ${['org-acme', 'org-globex']}, ${abilities})
      ON CONFLICT (client_id) DO NOTHING`;
    // A clock moved ahead ends the token (it lives on the latest clock of its organizations): a new one each time.
    for (const organization_id of ['org-acme', 'org-globex'])
      expect(
        (await call(await newToken('acme-globex-admin'), 'POST', '/sandbox/clock', { organization_id, advance: '2d' }))
          .status,
      ).toBe(200);
    const one = await call(await newToken('acme-globex-admin'), 'POST', '/sandbox/reset', {
      organization_id: 'org-globex',
    });
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body.data.clock).toMatchObject({ organization_id: 'org-globex', offset_seconds: 0 });
    const several = await call(await newToken('acme-globex-admin'), 'POST', '/sandbox/reset');
    expect(several.status, JSON.stringify(several.body)).toBe(200);
    expect(several.body.data.organization_ids).toEqual(['org-acme', 'org-globex']);
    expect(several.body.data.clock).not.toHaveProperty('organization_id');
    expect(several.body.data.clock).toMatchObject({ offset_seconds: 0, now: several.body.data.clock.real_now });
  });

  it('names one organization of the token with organization_id; another is a 404', async () => {
    const acme = await newToken('acme-admin');
    const other = await call(acme, 'POST', '/sandbox/reset', { organization_id: 'org-globex' });
    expect(other.status).toBe(404);
    const own = await call(acme, 'POST', '/sandbox/reset', { organization_id: 'org-acme' });
    expect(own.status).toBe(200);
    expect(own.body.data.organization_ids).toEqual(['org-acme']);
  });
});

describe('the whole-server reset', () => {
  it("is the operator's only: scope server from an API token is a 403, a wrong credential a 401", async () => {
    const acme = await newToken('acme-admin');
    expect((await call(acme, 'POST', '/sandbox/reset', { scope: 'server' })).status).toBe(403);
    expect((await call(`${OPERATOR}x`, 'POST', '/sandbox/reset', { scope: 'server' })).status).toBe(401);
    const bare = await call(OPERATOR, 'POST', '/sandbox/reset');
    expect(bare.status).toBe(422);
    expect(bare.body.errors).toHaveProperty('organization_id');
    // The operator reaches no organization's data.
    expect((await call(OPERATOR, 'GET', '/tags?brand_id=brand-acme')).status).toBe(403);
  });

  it('empties every organization with the operator credential and loads the fixture file again', async () => {
    const globex = await newToken('globex-admin');
    expect(
      (await call(globex, 'POST', '/members', { brand_id: 'brand-globex', email: 'before-server-reset@globex.test' }))
        .status,
    ).toBe(201);
    const res = await call(OPERATOR, 'POST', '/sandbox/reset', { scope: 'server' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.scope).toBe('server');
    expect(res.body.data.organization_ids).toEqual(['org-acme', 'org-globex']);
    expect(await count('members', 'org-globex')).toBe(0);
    expect((await call(globex, 'GET', '/tags?brand_id=brand-globex')).status).toBe(401);
    expect((await call(await newToken('globex-admin'), 'GET', '/tags?brand_id=brand-globex')).status).toBe(200);
  });

  it('answers the clock at real time and of no one organization (every clock is back at real time)', async () => {
    const acme = await newToken('acme-admin');
    expect((await call(acme, 'POST', '/sandbox/clock', { advance: '3d' })).status).toBe(200);
    const res = await call(OPERATOR, 'POST', '/sandbox/reset', { scope: 'server' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.clock).not.toHaveProperty('organization_id');
    expect(res.body.data.clock.offset_seconds).toBe(0);
    expect(res.body.data.clock.now).toBe(res.body.data.clock.real_now);
    const own = await call(await newToken('acme-admin'), 'GET', '/sandbox/clock');
    expect(own.body.data).toMatchObject({ organization_id: 'org-acme', offset_seconds: 0 });
  });

  it('has no operator when LOYALTY_SANDBOX_OPERATOR_TOKEN is unset', async () => {
    const plain = await createTestServer({ sandbox: true });
    try {
      const res = await plain.inject({
        method: 'POST',
        url: '/sandbox/reset',
        headers: bearer(OPERATOR),
        payload: { scope: 'server' },
      });
      expect(res.statusCode).toBe(401);
    } finally {
      await plain.close();
    }
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The request's answer, or a failure when it takes longer than 5 s (it waited for the reset). */
function within<T>(p: Promise<T>, ms = 5000): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  ]);
}
