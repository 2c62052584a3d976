import type { ServerInjectResponse } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginServer, remainingAfterStart } from '#test-helpers/plugin-server.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { sha256 } from '../lib/hash.js';
import { createServer } from '../server.js';
import { issueToken, LIVE_TOKENS_PER_CLIENT } from '../services/platform/tokens.js';

// An hour-long window, so no test straddles a window boundary.
const WINDOW = 3600;
let ts: TestServer;
let address = 0;
/** A fresh client address per test: each starts with a full per-IP budget. */
const nextAddress = () => `10.0.0.${++address}`;
let clients = 0;
const ALL_ABILITIES = ['tags.get', 'tags.store', 'members.get', 'members.store', 'passes.store'];
/** A new client of org-acme: its tokens are fresh, and its cap of live tokens untouched by other tests. */
const freshClient = async () => {
  const clientId = `rate-client-${++clients}`;
  await ts.db.sql`
    INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
    VALUES (${clientId}, ${sha256(`${clientId}-secret`)}, '{org-acme}', ${ALL_ABILITIES})`;
  return clientId;
};
/** Tokens straight from the service: issuing through POST /oauth/token would spend IP budget. */
const tokenOf = async (clientId: string, scope?: string[]) => {
  const { access_token } = await issueToken(ts.db.sql, {
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: `${clientId}-secret`,
    scope: scope?.join(' '),
  });
  return { authorization: `Bearer ${access_token}` };
};
/** A new token (a full budget), of a new client. */
const freshToken = async (scope?: string[]) => tokenOf(await freshClient(), scope);
const limits = (res: ServerInjectResponse) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
});

beforeAll(async () => {
  ts = await createTestServer({ rateLimitToken: 5, rateLimitIp: 3, rateLimitWindowSeconds: WINDOW });
});
afterAll(() => ts?.close());

describe('per-token limit (api-spec: 600 a minute, counted per token)', () => {
  it('counts down on every response, then answers 429 {message} with Retry-After and Remaining 0', async () => {
    const headers = await freshToken();
    const seen = [];
    for (let i = 0; i < 5; i++) {
      const res = await ts.inject({ method: 'GET', url: '/tags', headers });
      expect(res.statusCode).toBe(200);
      seen.push(limits(res));
      expect(res.headers['ratelimit-policy']).toBe(`"token";q=5;w=${WINDOW}`);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"token";r=${4 - i};t=\\d+$`));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0].map((remaining) => ({ limit: '5', remaining: String(remaining) })));
    const over = await ts.inject({ method: 'GET', url: '/tags', headers });
    expect(over.statusCode).toBe(429);
    expect(JSON.parse(over.payload)).toEqual({ message: 'Too Many Attempts.' });
    expect(limits(over)).toEqual({ limit: '5', remaining: '0' });
    const retryAfter = Number(over.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW).toBe(true);
    expect(over.headers.ratelimit).toBe(`"token";r=0;t=${retryAfter}`);
  });

  it('does not process a request over the limit, and checks the limit before validation', async () => {
    const headers = await freshToken();
    for (let i = 0; i < 5; i++) await ts.inject({ method: 'GET', url: '/tags', headers });
    const create = await ts.inject({
      method: 'POST',
      url: '/tags',
      headers,
      payload: { brand_id: 'brand-acme', external_reference: 'over-limit', tag: 'X' },
    });
    expect(create.statusCode).toBe(429);
    const [row] = await ts.db.sql`SELECT count(*)::int AS n FROM tags WHERE external_reference = 'over-limit'`;
    expect(row!.n).toBe(0);
    const invalid = await ts.inject({ method: 'POST', url: '/tags', headers, payload: { brand_id: 5 } });
    expect(invalid.statusCode).toBe(429);
  });

  it('gives every token its own budget, apart from the IP budget', async () => {
    const remoteAddress = nextAddress();
    const a = await freshToken();
    for (let i = 0; i < 6; i++) await ts.inject({ method: 'GET', url: '/tags', headers: a, remoteAddress });
    const b = await ts.inject({ method: 'GET', url: '/tags', headers: await freshToken(), remoteAddress });
    expect(b.statusCode).toBe(200);
    expect(limits(b)).toEqual({ limit: '5', remaining: '4' });
    const anonymous = await ts.inject({ method: 'GET', url: '/openapi.yaml', remoteAddress });
    expect(anonymous.statusCode).toBe(200);
    expect(limits(anonymous)).toEqual({ limit: '3', remaining: '2' });
  });

  it('gives two tokens of one client separate budgets, each with its own X-RateLimit-Remaining', async () => {
    const client = await freshClient();
    const a = await tokenOf(client);
    const b = await tokenOf(client);
    const remaining = [];
    for (let i = 0; i < 6; i++) {
      const res = await ts.inject({ method: 'GET', url: '/tags', headers: a });
      remaining.push([res.statusCode, limits(res).remaining]);
    }
    expect(remaining).toEqual([
      [200, '4'],
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
    ]);
    // The same client's other token has spent nothing.
    const other = await ts.inject({ method: 'GET', url: '/tags', headers: b });
    expect(other.statusCode).toBe(200);
    expect(limits(other)).toEqual({ limit: '5', remaining: '4' });
    expect(other.headers['ratelimit-policy']).toBe(`"token";q=5;w=${WINDOW}`);
  });

  it('bounds a client by its live tokens: of 25 minted, only the 20 newest are served', async () => {
    const client = await freshClient();
    const tokens = [];
    for (let i = 0; i < LIVE_TOKENS_PER_CLIENT + 5; i++) tokens.push(await tokenOf(client));
    const remoteAddress = nextAddress();
    const statuses: number[] = [];
    for (const headers of tokens)
      for (let i = 0; i < 6; i++)
        statuses.push((await ts.inject({ method: 'GET', url: '/tags', headers, remoteAddress })).statusCode);
    const counts: Record<number, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    // The 5 oldest were revoked by the cap (401, counted against the address: 3 then 429); each
    // live token gets its own 5, so the client's whole budget is 20 x 5.
    expect(counts).toEqual({ 200: LIVE_TOKENS_PER_CLIENT * 5, 401: 3, 429: 27 + LIVE_TOKENS_PER_CLIENT });
  });

  it('puts the headers on error responses too (400, 403, 404, 422)', async () => {
    const client = await freshClient();
    const headers = await tokenOf(client);
    const lacking = await tokenOf(await freshClient(), ['tags.get']);
    const responses = [
      await ts.inject({
        method: 'POST',
        url: '/tags',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{',
      }),
      await ts.inject({
        method: 'POST',
        url: '/tags',
        headers: lacking,
        payload: { brand_id: 'brand-acme', external_reference: 'r', tag: 'R' },
      }),
      await ts.inject({
        method: 'PUT',
        url: '/tags',
        headers,
        payload: { tag_id: '00000000-0000-4000-8000-000000000000', tag: 'X' },
      }),
      await ts.inject({ method: 'POST', url: '/tags', headers, payload: {} }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([400, 403, 404, 422]);
    // The 403 went to the other token's budget.
    expect(responses.map((r) => limits(r).remaining)).toEqual(['4', '4', '3', '2']);
    expect(responses[1]!.headers['x-ratelimit-limit']).toBe('5');
    expect(responses[1]!.headers['ratelimit-policy']).toBe(`"token";q=5;w=${WINDOW}`);
  });

  it('is shared by every server process on the database', async () => {
    const other = await createServer({ sql: ts.db.sql, config: ts.config, log: () => {} });
    await other.initialize();
    try {
      const headers = await freshToken();
      const remaining = [];
      for (const server of [ts.server, other, ts.server, other])
        remaining.push(
          (await server.inject({ method: 'GET', url: '/tags', headers })).headers['x-ratelimit-remaining'],
        );
      expect(remaining).toEqual(['4', '3', '2', '1']);
    } finally {
      await other.stop();
    }
  });
});

describe('per-IP limit for requests without a (valid) token', () => {
  it('counts anonymous requests, POST /oauth/token, invalid tokens and unknown routes against the address', async () => {
    const remoteAddress = nextAddress();
    const token = await ts.server.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress,
      payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
    });
    expect(token.statusCode).toBe(200);
    expect(limits(token)).toEqual({ limit: '3', remaining: '2' });
    expect(token.headers['ratelimit-policy']).toBe(`"ip";q=3;w=${WINDOW}`);
    const badToken = await ts.inject({
      method: 'GET',
      url: '/tags',
      remoteAddress,
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(badToken.statusCode).toBe(401);
    expect(limits(badToken)).toEqual({ limit: '3', remaining: '1' });
    const unknown = await ts.inject({ method: 'GET', url: '/no-such-route', remoteAddress });
    expect(unknown.statusCode).toBe(404);
    expect(limits(unknown)).toEqual({ limit: '3', remaining: '0' });

    for (const request of [
      { method: 'GET', url: '/openapi.yaml' },
      {
        method: 'POST',
        url: '/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
      },
      { method: 'GET', url: '/tags', headers: { authorization: 'Bearer not-a-token' } },
      { method: 'GET', url: '/tags' },
    ]) {
      const res = await ts.server.inject({ ...request, remoteAddress });
      expect(res.statusCode, request.url).toBe(429);
      expect(JSON.parse(res.payload)).toEqual({ message: 'Too Many Attempts.' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limits(res)).toEqual({ limit: '3', remaining: '0' });
    }
    // A valid token still works from the same address: tokens have their own budget.
    const valid = await ts.inject({ method: 'GET', url: '/tags', remoteAddress, headers: await freshToken() });
    expect(valid.statusCode).toBe(200);
  });

  it('never limits GET /health', async () => {
    const remoteAddress = nextAddress();
    for (let i = 0; i < 6; i++) {
      const res = await ts.inject({ method: 'GET', url: '/health', remoteAddress });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const [row] = await ts.db.sql`SELECT count(*)::int AS n FROM rate_limits WHERE bucket = ${`ip:${remoteAddress}`}`;
    expect(row!.n).toBe(0);
  });
});

describe('purge of old counters', () => {
  it('runs every purgeIntervalMs while the server is started', async () => {
    const { rateLimitPlugin } = await import('./rate-limit.js');
    const server = await pluginServer(rateLimitPlugin, {
      sql: ts.db.sql,
      tokenLimit: 5,
      ipLimit: 5,
      windowSeconds: 60,
      purgeIntervalMs: 20,
    });
    await ts.db.sql`INSERT INTO rate_limits (bucket, window_start, count) VALUES ('ip:purge-me', 1000, 1)`;
    const count = async () =>
      (await ts.db.sql`SELECT count(*)::int AS n FROM rate_limits WHERE bucket = 'ip:purge-me'`)[0]!.n;
    expect(await remainingAfterStart(server, count)).toBe(0);
  });
});
