import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from './client.js';
import { isLoyaltyError } from './errors.js';
import { mswServer } from './test-support.js';
import { mockLoyaltyApi } from './testing.js';
import { createSandboxOrganization } from './testing-sandbox.js';

const baseUrl = 'http://sandbox-orgs.test';
const server = mswServer();
const ci = { clientId: 'sandbox-ci', clientSecret: 'sandbox-ci-secret' };

function setup() {
  const api = mockLoyaltyApi({ baseUrl, clients: { 'sandbox-ci': { secret: ci.clientSecret } } });
  server.use(...api.handlers);
  return api;
}

describe('createSandboxOrganization (@loyalty/sdk/testing/sandbox)', () => {
  it('creates one with client credentials: the typed answer, working admin credentials, delete() removes it', async () => {
    const api = setup();
    const org = await createSandboxOrganization({ baseUrl, clientCredentials: ci, ttl: '30m', name: 'CI run 7' });
    expect(org.organization).toMatchObject({ id: expect.stringMatching(/^sbx-/), name: 'CI run 7' });
    const ttl = Date.parse(org.organization.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(29 * 60_000);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000);
    expect(org.clients.admin.abilities).toContain('sandbox.manage');
    expect(org.clients.readonly.abilities.every((a) => a.endsWith('.get'))).toBe(true);
    expect(org.baseUrl).toBe(baseUrl);
    const sent = api.requests.find((r) => r.path === '/sandbox/organizations');
    expect(sent?.body).toEqual({ ttl: '30m', name: 'CI run 7' });
    expect(sent?.idempotencyKey).toBeTruthy();

    // The answered admin client gets tokens and may call the API.
    const admin = createLoyaltyClient({
      baseUrl,
      clientCredentials: { clientId: org.clients.admin.client_id, clientSecret: org.clients.admin.client_secret },
    });
    expect((await admin.GET('/tags')).response.status).toBe(200);

    await org.delete();
    expect(api.sandboxOrganizations.has(org.organization.id)).toBe(false);
    const deletes = api.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => [r.path, r.status])).toEqual([[`/sandbox/organizations/${org.organization.id}`, 204]]);
    // Already gone (retention, or a second teardown): resolves.
    await org.delete();
  });

  it('with the operator token: sends it as the bearer and asks for no token', async () => {
    const api = setup();
    const org = await createSandboxOrganization({ baseUrl, operatorToken: 'operator-secret-1' });
    expect(api.requests.some((r) => r.path === '/oauth/token')).toBe(false);
    expect(api.requests[0]?.headers.get('authorization')).toBe('Bearer operator-secret-1');
    expect(api.requests[0]?.body).toBeUndefined();
    const ttl = Date.parse(org.organization.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(59 * 60_000); // the server's default, 1h
    await org.delete();
    expect(api.requests.at(-1)?.headers.get('authorization')).toBe('Bearer operator-secret-1');
  });

  it("throws the API's refusal as a LoyaltyError naming the field", async () => {
    setup();
    const refused = await createSandboxOrganization({ baseUrl, clientCredentials: ci, ttl: '8d' }).catch(
      (error: unknown) => error,
    );
    expect(isLoyaltyError(refused) && [refused.status, refused.code, Object.keys(refused.fields ?? {})]).toEqual([
      422,
      'validation_failed',
      ['ttl'],
    ]);
    const wrong = await createSandboxOrganization({
      baseUrl,
      clientCredentials: { ...ci, clientSecret: 'nope' },
    }).catch((error: unknown) => error);
    expect(isLoyaltyError(wrong) && wrong.status).toBe(401);
  });

  it('wants exactly one credential', async () => {
    setup();
    // @ts-expect-error neither
    await expect(createSandboxOrganization({ baseUrl })).rejects.toThrow(/clientCredentials or operatorToken/);
    await expect(
      // @ts-expect-error both
      createSandboxOrganization({ baseUrl, clientCredentials: ci, operatorToken: 'x' }),
    ).rejects.toThrow(/clientCredentials or operatorToken/);
  });

  it('needs no msw: the entry imports the client and errors only', () => {
    const source = readFileSync(new URL('./testing-sandbox.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(imports.filter((path) => !['./client.js', './errors.js', './auth.js'].includes(path ?? ''))).toEqual([
      './generated/openapi.js',
    ]);
    expect(source).toMatch(/^import type .* from '\.\/generated\/openapi\.js';$/m);
  });

  it('the vitest globalSetup example (sdk/examples, built SDK) provides the admin client and deletes on teardown', async () => {
    const api = setup();
    const { default: globalSetup } = await import(new URL('../examples/vitest-global-setup.mjs', import.meta.url).href);
    const provided = new Map<string, unknown>();
    const teardown = await globalSetup(
      { provide: (key: string, value: unknown) => provided.set(key, value) },
      { LOYALTY_API_URL: baseUrl, LOYALTY_CLIENT_ID: ci.clientId, LOYALTY_CLIENT_SECRET: ci.clientSecret },
    );
    const org = [...api.sandboxOrganizations.values()][0];
    expect(provided.get('loyalty')).toEqual({
      baseUrl,
      organizationId: org?.organization.id,
      brandId: org?.brand_id,
      couponId: org?.coupon_id,
      storecardId: org?.storecard_id,
      clientId: org?.clients.admin.client_id,
      clientSecret: org?.clients.admin.client_secret,
    });
    expect(JSON.parse(JSON.stringify(provided.get('loyalty')))).toEqual(provided.get('loyalty'));
    await teardown();
    expect(api.sandboxOrganizations.size).toBe(0);
  });
});
