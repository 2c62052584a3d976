import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { LIVE_TOKENS_PER_CLIENT } from '../services/platform/tokens.js';

// Live tokens per client are capped: issuing one past the cap revokes the client's oldest, so
// minting tokens cannot multiply a client's share of anything (issue 25, finding 4).

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t.close());

const issue = async (clientId: string) => {
  const res = await t.inject({
    method: 'POST',
    url: '/oauth/token',
    payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: `${clientId}-secret` },
  });
  expect(res.statusCode).toBe(200);
  return { authorization: `Bearer ${(res.result as { access_token: string }).access_token}` };
};
const statusOf = async (headers: { authorization: string }) =>
  (await t.inject({ method: 'GET', url: '/tags?brand_id=brand-acme', headers })).statusCode;

describe('live tokens per client', () => {
  it('keeps the newest LIVE_TOKENS_PER_CLIENT: issuing one more revokes the oldest', async () => {
    const globex = await issue('globex-admin');
    const tokens = [];
    for (let i = 0; i < LIVE_TOKENS_PER_CLIENT + 5; i++) tokens.push(await issue('acme-readonly'));
    const statuses = [];
    for (const headers of tokens) statuses.push(await statusOf(headers));
    expect(statuses).toEqual([
      ...Array.from({ length: 5 }, () => 401),
      ...Array.from({ length: LIVE_TOKENS_PER_CLIENT }, () => 200),
    ]);
    const [row] = await t.db.sql`SELECT count(*)::int AS n FROM access_tokens WHERE client_id = 'acme-readonly'`;
    expect(row!.n).toBe(LIVE_TOKENS_PER_CLIENT);
    // Another client's token is untouched.
    expect((await t.inject({ method: 'GET', url: '/tags?brand_id=brand-globex', headers: globex })).statusCode).toBe(
      200,
    );
  });

  it('answers 200 to 50 concurrent token requests of one client, five rounds, and keeps the cap', async () => {
    // Concurrent issues each delete the client's oldest past the cap; they must neither deadlock
    // (40P01, a 500) nor leave more than LIVE_TOKENS_PER_CLIENT live tokens.
    const request = () =>
      t.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: 'globex-admin', client_secret: 'globex-admin-secret' },
      });
    const statuses: Record<number, number> = {};
    for (let round = 0; round < 5; round++)
      for (const res of await Promise.all(Array.from({ length: 50 }, request)))
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    expect(statuses).toEqual({ 200: 250 });
    const [row] = await t.db.sql`SELECT count(*)::int AS n FROM access_tokens WHERE client_id = 'globex-admin'`;
    expect(row!.n).toBe(LIVE_TOKENS_PER_CLIENT);
  });

  it('stops serving a revoked token at once, though the process has it in its cache', async () => {
    const first = await issue('acme-admin');
    expect(await statusOf(first)).toBe(200); // now in the resolver's cache
    for (let i = 0; i < LIVE_TOKENS_PER_CLIENT; i++) await issue('acme-admin');
    expect(await statusOf(first)).toBe(401);
  });
});
