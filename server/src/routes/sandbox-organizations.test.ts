import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, type TestServer } from '#test-helpers/server.js';
import type { Schemas } from '../lib/schemas.js';
import { MAX_LIVE_PER_CREATOR, removeExpiredOrganizations } from '../services/sandbox/sandbox-organizations.js';

// Issue 25: throwaway sandbox organizations for parallel CI (POST/DELETE /sandbox/organizations),
// removed with all their data when their time to live ends.

const OPERATOR = 'operator-credential-of-this-test-0123456789';

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true, sandboxOperatorToken: OPERATOR });
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenOf = async (clientId: string, secret = `${clientId}-secret`) => {
  const res = await t.server.inject({
    method: 'POST',
    url: '/oauth/token',
    payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
  });
  return { status: res.statusCode, token: (JSON.parse(res.payload) as { access_token?: string }).access_token ?? '' };
};
const call = async (token: string, method: string, url: string, payload?: unknown) => {
  const res = await t.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload !== undefined && { payload: payload as object }),
  });
  return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
};
type Created = Schemas['SandboxOrganizationCreated'];
const create = async (token: string, body: unknown = { ttl: '1h' }) => {
  const res = await call(token, 'POST', '/sandbox/organizations', body);
  return { status: res.status, body: res.body, created: res.body?.data as Created };
};
/** Rows of the organization in every table that has an organization_id, plus its clients and tokens. */
const rowsOf = async (org: string) => {
  const tables = await t.db.sql<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND column_name = 'organization_id'`;
  let n = 0;
  for (const { table_name } of tables)
    n += (
      await t.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM ${t.db.sql(table_name)} WHERE organization_id = ${org}`
    )[0]?.n as number;
  const [rest] = await t.db.sql<{ n: number }[]>`
    SELECT (SELECT count(*) FROM organizations WHERE id = ${org})
         + (SELECT count(*) FROM clients WHERE ${org} = ANY(organization_ids))
         + (SELECT count(*) FROM access_tokens WHERE ${org} = ANY(organization_ids))
         + (SELECT count(*) FROM brand_members bm JOIN members m ON m.id = bm.member_id WHERE m.organization_id = ${org}) AS n`;
  return n + Number(rest?.n);
};

describe('POST /sandbox/organizations', () => {
  it('creates an organization whose admin works at once, confined to it; the creator deletes it (204)', async () => {
    const ci = (await tokenOf('sandbox-ci')).token;
    const { status, created, body } = await create(ci, { ttl: '2h', name: 'CI run 1' });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(created.organization.name).toBe('CI run 1');
    const ttlMs = Date.parse(created.organization.expires_at) - Date.now();
    expect(ttlMs).toBeGreaterThan(7_100_000);
    expect(ttlMs).toBeLessThan(7_300_000);
    expect(created.clients.admin.abilities).toContain('sandbox.manage');
    expect(created.clients.readonly.abilities).toEqual(['tags.get', 'members.get', 'webhooks.get']);
    // Only hashes are stored.
    const stored = await t.db.sql`SELECT secret_hash FROM clients WHERE client_id = ${created.clients.admin.client_id}`;
    expect(JSON.stringify(stored)).not.toContain(created.clients.admin.client_secret);

    const admin = await tokenOf(created.clients.admin.client_id, created.clients.admin.client_secret);
    expect(admin.status).toBe(200);
    const member = await call(admin.token, 'POST', '/members', {
      brand_id: created.brand_id,
      email: 'ci@example.test',
    });
    expect(member.status, JSON.stringify(member.body)).toBe(201);
    const memberId = member.body.member_id as string;
    for (const pass of [{ coupon_id: created.coupon_id }, { storecard_id: created.storecard_id }])
      expect(
        (await call(admin.token, 'POST', `/members/${memberId}/passes`, { brand_id: created.brand_id, ...pass }))
          .status,
      ).toBe(201);
    expect((await call(admin.token, 'GET', '/sandbox/clock')).status).toBe(200);
    // Its own reset: its data goes, its brand, coupon, storecard and clients stay; its tokens are revoked.
    expect((await call(admin.token, 'POST', '/sandbox/reset')).status).toBe(200);
    expect((await call(admin.token, 'GET', '/sandbox/clock')).status).toBe(401);
    const again = await tokenOf(created.clients.admin.client_id, created.clients.admin.client_secret);
    expect(again.status).toBe(200);
    expect((await t.db.sql`SELECT 1 FROM members WHERE organization_id = ${created.organization.id}`).length).toBe(0);
    expect(
      (await call(again.token, 'POST', `/members`, { brand_id: created.brand_id, email: 'ci@example.test' })).status,
    ).toBe(201);
    // Confined: acme's brand is not its brand.
    expect(
      (await call(again.token, 'POST', '/members', { brand_id: 'brand-acme', email: 'x@example.test' })).status,
    ).toBe(404);
    const readonly = await tokenOf(created.clients.readonly.client_id, created.clients.readonly.client_secret);
    expect((await call(readonly.token, 'GET', '/sandbox/clock')).status).toBe(403);
    expect(
      (await call(readonly.token, 'POST', '/members', { brand_id: created.brand_id, email: 'y@example.test' })).status,
    ).toBe(403);

    // Another tenant cannot delete it; the creator can.
    const globex = (await tokenOf('globex-admin')).token;
    expect((await call(globex, 'DELETE', `/sandbox/organizations/${created.organization.id}`)).status).toBe(404);
    expect((await call(ci, 'DELETE', `/sandbox/organizations/${created.organization.id}`)).status).toBe(204);
    expect(await rowsOf(created.organization.id)).toBe(0);
    expect((await call(admin.token, 'GET', `/tags?brand_id=${created.brand_id}`)).status).toBe(401);
    expect((await tokenOf(created.clients.admin.client_id, created.clients.admin.client_secret)).status).toBe(401);
  });

  it('lets the operator create and the organization admin delete; fixture organizations are never deletable', async () => {
    const { status, created } = await create(OPERATOR, {});
    expect(status).toBe(201);
    const ttlMs = Date.parse(created.organization.expires_at) - Date.now();
    expect(ttlMs).toBeGreaterThan(3_500_000); // the default, 1h
    expect(ttlMs).toBeLessThan(3_700_000);
    const admin = await tokenOf(created.clients.admin.client_id, created.clients.admin.client_secret);
    expect((await call(admin.token, 'DELETE', '/sandbox/organizations/org-acme')).status).toBe(404);
    expect((await call(OPERATOR, 'DELETE', '/sandbox/organizations/org-acme')).status).toBe(404);
    expect((await call(admin.token, 'DELETE', `/sandbox/organizations/${created.organization.id}`)).status).toBe(204);
    expect(await rowsOf(created.organization.id)).toBe(0);
  });

  it('refuses tokens without sandbox.create, a ttl beyond 7d, and more than the cap of live organizations', async () => {
    const acme = (await tokenOf('acme-admin')).token;
    expect((await create(acme)).status).toBe(403);
    const ci = (await tokenOf('sandbox-ci')).token;
    const long = await create(ci, { ttl: '8d' });
    expect(long.status).toBe(422);
    expect(long.body.errors).toHaveProperty('ttl');
    expect((await create(ci, { ttl: 'soon' })).status).toBe(422);
    expect((await create(ci, { ttl: '1h', extra: 1 })).status).toBe(422);

    const live = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM organizations WHERE created_by_client = 'sandbox-ci' AND expires_at > now()`;
    for (let i = live[0]?.n ?? 0; i < MAX_LIVE_PER_CREATOR; i++) expect((await create(ci)).status).toBe(201);
    const over = await create(ci);
    expect(over.status).toBe(422);
    expect(over.body.errors).toHaveProperty('organizations');
    // The operator's own budget is not the client's.
    const mine = await create(OPERATOR);
    expect(mine.status).toBe(201);
  });
});

describe('expiry', () => {
  it('retention removes an expired organization with all its data, and nothing of another', async () => {
    const ci = (await tokenOf('sandbox-ci')).token;
    const { created } = await create(OPERATOR, { ttl: '1m' });
    const admin = await tokenOf(created.clients.admin.client_id, created.clients.admin.client_secret);
    for (let i = 0; i < 3; i++)
      expect(
        (await call(admin.token, 'POST', '/members', { brand_id: created.brand_id, email: `e${i}@example.test` }))
          .status,
      ).toBe(201);
    expect(
      (
        await call(admin.token, 'POST', '/webhook-subscriptions', {
          url: 'https://hooks.ci.test/a',
          events: ['member.created'],
        })
      ).status,
    ).toBe(201);
    expect((await call(admin.token, 'POST', '/sandbox/clock', { advance: '30d' })).status).toBe(200);
    const acmeBefore = await rowsOf('org-acme');
    expect(await rowsOf(created.organization.id)).toBeGreaterThan(5);

    // Not yet expired (real time, whatever its sandbox clock says): nothing goes.
    expect(await removeExpiredOrganizations(t.db.sql)).toBe(0);
    await t.db
      .sql`UPDATE organizations SET expires_at = now() - interval '1 second' WHERE id = ${created.organization.id}`;
    expect(await removeExpiredOrganizations(t.db.sql)).toBe(1);
    expect(await rowsOf(created.organization.id)).toBe(0);
    expect(await rowsOf('org-acme')).toBe(acmeBefore);
    expect((await call(admin.token, 'GET', `/tags?brand_id=${created.brand_id}`)).status).toBe(401);
    expect(ci).not.toBe('');
  });
});
