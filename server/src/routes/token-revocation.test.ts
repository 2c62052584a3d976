import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { createServer } from '../server.js';
import { LIVE_TOKENS_PER_CLIENT } from '../services/platform/tokens.js';

// A revoked or expired token is refused on the very next request, by this process and by any
// other API process on the database, although each keeps resolved tokens in a cache: the
// request's rate-limit statement counts a token only while its row is live, and a token it
// does not count is answered 401 (counted against the address, as any unknown token is).

let t: TestServer;
/** A second API process on the same database: a cache of its own. */
let other: Server;
beforeAll(async () => {
  t = await createTestServer();
  other = await createServer({ sql: t.db.sql, config: t.config, log: () => {} });
  await other.initialize();
});
afterAll(async () => {
  await other.stop();
  await t.close();
});

const issue = async (clientId: string) => ({ authorization: `Bearer ${await t.newToken(clientId)}` });
const get = (server: Server, headers: { authorization: string }, brand = 'brand-acme') =>
  server.inject({ method: 'GET', url: `/tags?brand_id=${brand}`, headers });
const revokeOldest = async (clientId: string) => {
  for (let i = 0; i < LIVE_TOKENS_PER_CLIENT; i++) await issue(clientId);
};

describe('token revocation', () => {
  it('refuses a revoked token on the next request in the process that revoked it', async () => {
    const first = await issue('acme-admin');
    expect((await get(t.server, first)).statusCode).toBe(200); // cached now
    await revokeOldest('acme-admin');
    const res = await get(t.server, first);
    expect(res.statusCode).toBe(401);
    // Counted against the address, as any token that is not known.
    expect(res.headers['ratelimit-policy']).toMatch(/^"ip";/);
  });

  it('refuses a token revoked by another process on the next request, and only that token', async () => {
    const first = await issue('acme-readonly');
    const globex = await issue('globex-admin');
    expect((await get(other, first)).statusCode).toBe(200); // in the other process's cache
    expect((await get(other, globex, 'brand-globex')).statusCode).toBe(200);
    await revokeOldest('acme-readonly'); // through this process
    expect((await get(other, first)).statusCode).toBe(401);
    expect((await get(other, globex, 'brand-globex')).statusCode).toBe(200);
  });

  it('refuses a token removed from the database (a reset) on the next request of every process', async () => {
    const token = await issue('globex-admin');
    expect((await get(t.server, token, 'brand-globex')).statusCode).toBe(200);
    expect((await get(other, token, 'brand-globex')).statusCode).toBe(200);
    await t.db.sql`DELETE FROM access_tokens WHERE client_id = 'globex-admin'`;
    expect((await get(t.server, token, 'brand-globex')).statusCode).toBe(401);
    expect((await get(other, token, 'brand-globex')).statusCode).toBe(401);
  });

  it('refuses a token whose organization clock passed its expiry in another process, on the next request', async () => {
    const token = await issue('acme-admin');
    expect((await get(other, token)).statusCode).toBe(200);
    // The sandbox clock of acme moved two hours ahead (another process's POST /sandbox/clock).
    await t.db.sql`INSERT INTO sandbox_clocks (organization_id, offset_seconds) VALUES ('org-acme', 7200)
                   ON CONFLICT (organization_id) DO UPDATE SET offset_seconds = EXCLUDED.offset_seconds`;
    try {
      expect((await get(other, token)).statusCode).toBe(401);
    } finally {
      await t.db.sql`DELETE FROM sandbox_clocks WHERE organization_id = 'org-acme'`;
    }
  });
});
