import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginServer, remainingAfterStart } from '#test-helpers/plugin-server.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { loadOpenApi } from '../lib/openapi.js';
import { FAULT_KEYS_PER_CLIENT } from '../services/sandbox/sandbox-faults.js';

// Faults on demand are honoured only on authenticated API routes, and their counters are bounded
// per client and purged (issue 25, finding 5: one client added ~400 rows/s through /health/ready).

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true });
});
afterAll(() => t.close());

const rows = async () => (await t.db.sql`SELECT count(*)::int AS n FROM sandbox_faults`)[0]!.n as number;
const prefer = (id: number | string) => ({ prefer: `fault=rate_limit;times=1;id=${id}` });

describe('Prefer: fault', () => {
  it('is ignored without a token: 1,000 ids on /health/ready, /health, /openapi.yaml and /oauth/token add no row', async () => {
    const before = await rows();
    for (let i = 0; i < 1000; i++) {
      const res = await t.server.inject({ method: 'GET', url: '/health/ready', headers: prefer(i) });
      expect(res.statusCode).toBe(200);
    }
    for (const url of ['/health', '/openapi.yaml'])
      expect((await t.server.inject({ method: 'GET', url, headers: prefer(url) })).statusCode).toBe(200);
    const token = await t.server.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: prefer('token'),
      payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
    });
    expect(token.statusCode).toBe(200);
    expect(await rows()).toBe(before);
  });

  it("server_error answers a code of the document's ErrorCode, with the request id (issue 29)", async () => {
    const res = await t.server.inject({
      method: 'GET',
      url: '/tags?brand_id=brand-acme',
      headers: { ...(await t.auth('acme-admin')), prefer: 'fault=server_error;id=error-code' },
    });
    expect(res.statusCode).toBe(503);
    const body = res.result as { error: string; request_id: string };
    const schemas = (loadOpenApi().document.components?.schemas ?? {}) as Record<string, { enum?: string[] }>;
    expect(schemas.ErrorCode?.enum).toContain(body.error);
    expect(body).toEqual({ message: 'Server Error', error: 'server_error', request_id: res.headers['x-request-id'] });
  });

  it('keeps at most FAULT_KEYS_PER_CLIENT counters per client, whatever its tokens, and still applies the newest', async () => {
    const tokens = [await t.tokenFor('globex-admin'), await t.tokenFor('globex-admin', ['tags.get'])];
    for (let i = 0; i < FAULT_KEYS_PER_CLIENT * 3; i++) {
      const res = await t.server.inject({
        method: 'GET',
        url: '/tags?brand_id=brand-globex',
        headers: { authorization: `Bearer ${tokens[i % 2]}`, ...prefer(`g${i}`) },
      });
      expect(res.statusCode).toBe(429);
    }
    const [row] = await t.db.sql`SELECT count(*)::int AS n FROM sandbox_faults WHERE client_id = 'globex-admin'`;
    expect(row!.n).toBe(FAULT_KEYS_PER_CLIENT);
    // The counting still works: the key's second request goes through.
    const again = await t.server.inject({
      method: 'GET',
      url: '/tags?brand_id=brand-globex',
      headers: { authorization: `Bearer ${tokens[1]}`, ...prefer(`g${FAULT_KEYS_PER_CLIENT * 3 - 1}`) },
    });
    expect(again.statusCode).toBe(200);
  });

  it('purges expired counters while the server runs', async () => {
    const { sandboxFaultsPlugin } = await import('./sandbox-faults.js');
    const server = await pluginServer(sandboxFaultsPlugin, { sql: t.db.sql, purgeIntervalMs: 20 });
    await t.db.sql`
      INSERT INTO sandbox_faults (key, client_id, seen, expires_at)
      VALUES ('expired-key', 'acme-admin', 1, now() - interval '1 second')`;
    const count = async () =>
      (await t.db.sql`SELECT count(*)::int AS n FROM sandbox_faults WHERE key = 'expired-key'`)[0]!.n as number;
    expect(await remainingAfterStart(server, count)).toBe(0);
  });
});
