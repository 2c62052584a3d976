import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { NO_CORS } from '../config-cors.js';
import { createServer } from '../server.js';

// Issue 29: CORS per route group, from LOYALTY_CORS_ORIGINS (config-cors.ts, lib/cors.ts).

const ALLOWED = 'https://backoffice.example';
const OTHER = 'https://elsewhere.example';

let t: TestServer;
let closed: Server;
let auth: { authorization: string };
beforeAll(async () => {
  t = await createTestServer({ cors: { origins: [ALLOWED], anyOrigin: true } });
  auth = await t.auth('acme-admin');
  // The default (nothing configured), on the same database.
  closed = await createServer({ sql: t.db.sql, config: { ...t.config, cors: NO_CORS }, log: () => {} });
  await closed.initialize();
});
afterAll(async () => {
  await closed?.stop();
  await t?.close();
});

const preflight = (
  server: Server,
  url: string,
  origin: string,
  method = 'POST',
  headers = 'authorization,content-type',
) =>
  server.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
const corsHeaders = (headers: Record<string, unknown>) =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

describe('CORS with LOYALTY_CORS_ORIGINS unset (the default)', () => {
  it('answers no CORS header on any route group and no preflight', async () => {
    for (const url of ['/tags?brand_id=brand-acme', '/openapi.yaml', '/health', '/wallet/unknown/links']) {
      const res = await closed.inject({ method: 'GET', url, headers: { origin: ALLOWED, ...auth } });
      expect(corsHeaders(res.headers), url).toEqual([]);
    }
    expect((await preflight(closed, '/tags', ALLOWED)).statusCode).toBe(404);
  });
});

describe('CORS with an exact origin and *', () => {
  it('answers the preflight of an API call from the listed origin, with the headers the SDK sends', async () => {
    const res = await preflight(
      t.server,
      '/tags',
      ALLOWED,
      'POST',
      'authorization,content-type,idempotency-key,x-request-id',
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-allow-methods']).toBe('POST');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase().split(',')).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-request-id', 'prefer']),
    );
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('lets the listed origin read the rate-limit and request-id headers of an answer, errors included', async () => {
    const ok = await t.inject({
      method: 'GET',
      url: '/tags?brand_id=brand-acme',
      headers: { origin: ALLOWED, ...auth },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(ok.headers.vary).toMatch(/origin/i);
    const exposed = String(ok.headers['access-control-expose-headers']).toLowerCase().split(',');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-request-id',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'ratelimit-policy',
        'ratelimit',
        'retry-after',
        'idempotent-replayed',
      ]),
    );
    const unauthenticated = await t.inject({
      method: 'GET',
      url: '/tags?brand_id=brand-acme',
      headers: { origin: ALLOWED },
    });
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('gives another origin nothing on API routes and the token endpoint: * is only for routes without credentials', async () => {
    const res = await t.inject({
      method: 'GET',
      url: '/tags?brand_id=brand-acme',
      headers: { origin: OTHER, ...auth },
    });
    expect(res.statusCode).toBe(200); // the server answers; the browser keeps the answer from the page
    expect(corsHeaders(res.headers)).toEqual([]);
    for (const url of ['/tags', '/oauth/token']) {
      const refused = await preflight(t.server, url, OTHER);
      expect(refused.headers['access-control-allow-origin'], url).toBeUndefined();
      expect(JSON.parse(refused.payload), url).toEqual({ message: 'CORS error: Origin not allowed' });
    }
    expect((await preflight(t.server, '/oauth/token', ALLOWED)).headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('opens the reads without credentials to any origin with *, and leaves pages, metrics and the wallet web service closed', async () => {
    for (const url of ['/openapi.yaml', '/health']) {
      const res = await t.inject({ method: 'GET', url, headers: { origin: OTHER } });
      // hapi answers `*` by naming the asking origin (with `Vary: origin`).
      expect(res.headers['access-control-allow-origin'], url).toBe(OTHER);
    }
    for (const url of ['/', '/docs', '/metrics']) {
      const res = await t.server.inject({ method: 'GET', url, headers: { origin: ALLOWED } });
      expect(corsHeaders(res.headers), url).toEqual([]);
    }
    const webService = await preflight(t.server, '/wallet/apple/v1/log', ALLOWED);
    expect(webService.headers['access-control-allow-origin']).toBeUndefined();
  });
});
