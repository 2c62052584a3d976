import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { TEST_SECRET_KEY } from '#test-helpers/server.js';
import { loadConfig } from '../config.js';
import { createServer } from '../server.js';
import { createPool } from '../db/pool.js';

/**
 * Requests that run out of time are expected states, not bugs: a documented 503 with
 * Retry-After, whether hapi's request timeout or PostgreSQL's statement timeout cut them off.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function serverWith(handler: () => Promise<unknown>, requestTimeoutMs: number) {
  const logged: string[] = [];
  const config = { ...loadConfig({ LOYALTY_SECRET_KEY: TEST_SECRET_KEY }), requestTimeoutMs, fixtures: 'none' };
  const server = await createServer({
    sql: db.sql,
    config,
    log: (m) => logged.push(m),
    routes: [{ method: 'GET', path: '/health', handler }],
  });
  await server.initialize();
  return { server, logged };
}

describe('timeouts', () => {
  it("answer hapi's request timeout with a documented 503 and Retry-After, not an internal error", async () => {
    const { server, logged } = await serverWith(
      () => new Promise((r) => setTimeout(() => r({ status: 'ok' }), 500)),
      100,
    );
    const res = await server.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(JSON.parse(res.payload)).toEqual({
      message: expect.stringMatching(/too long/),
      error: 'request_timeout',
      request_id: res.headers['x-request-id'],
    });
    expect(logged.join('\n')).not.toMatch(/internal error/);
  });

  it("answer PostgreSQL's statement timeout the same way", async () => {
    const { server } = await serverWith(
      () =>
        db.sql.begin(async (tx) => {
          await tx`SET LOCAL statement_timeout = 50`;
          await tx`SELECT pg_sleep(1)`;
        }),
      5000,
    );
    const res = await server.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.payload)).toMatchObject({ error: 'request_timeout' });
  });
});

describe('a database that is down', () => {
  /** A server whose pool points at a closed port: every query fails to connect, as when PostgreSQL is stopped. */
  async function serverOnDeadDatabase() {
    const logged: string[] = [];
    const sql = createPool('postgres://loyalty@127.0.0.1:1/loyalty', { max: 2 });
    const config = { ...loadConfig({ LOYALTY_SECRET_KEY: TEST_SECRET_KEY }), fixtures: 'none' };
    const server = await createServer({ sql, config, log: (m) => logged.push(m) });
    await server.initialize();
    return { server, logged, sql };
  }

  it('answers every request 503 database_unavailable with Retry-After, and logs the outage once', async () => {
    const { server, logged, sql } = await serverOnDeadDatabase();
    try {
      const requests = [
        ...Array.from({ length: 4 }, () =>
          server.inject({ method: 'GET', url: '/tags?brand_id=brand-acme', headers: { authorization: 'Bearer abc' } }),
        ),
        ...Array.from({ length: 4 }, () =>
          server.inject({
            method: 'POST',
            url: '/oauth/token',
            payload: { grant_type: 'client_credentials', client_id: 'a', client_secret: 'b' },
          }),
        ),
      ];
      for (const res of await Promise.all(requests)) {
        expect(res.statusCode).toBe(503);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        expect(JSON.parse(res.payload)).toEqual({
          message: expect.stringMatching(/database/i),
          error: 'database_unavailable',
          request_id: res.headers['x-request-id'],
        });
      }
      expect(logged.filter((line) => /database/i.test(line))).toHaveLength(1);
      expect(logged.join('\n')).not.toMatch(/internal error/);
    } finally {
      await server.stop();
      await sql.end({ timeout: 1 });
    }
  });

  it('answers at once however long the outage lasts (the pool does not back off for seconds before each attempt)', async () => {
    const { server, sql } = await serverOnDeadDatabase();
    try {
      for (let i = 0; i < 25; i++) {
        const began = Date.now();
        const res = await server.inject({
          method: 'GET',
          url: '/tags',
          headers: { authorization: `Bearer token-${i}` },
        });
        expect(res.statusCode).toBe(503);
        expect(Date.now() - began).toBeLessThan(1000);
      }
    } finally {
      await server.stop();
      await sql.end({ timeout: 1 });
    }
  });

  it('answers a request that needs no database (an unknown path with a token) as usual, never 500', async () => {
    const { server, sql } = await serverOnDeadDatabase();
    try {
      const res = await server.inject({
        method: 'GET',
        url: '/no-such-path',
        headers: { authorization: 'Bearer abc' },
      });
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(res.payload)).toMatchObject({ error: 'not_found' });
    } finally {
      await server.stop();
      await sql.end({ timeout: 1 });
    }
  });

  it('keeps /health (liveness) at 200 while /health/ready answers 503 naming the database', async () => {
    const { server, sql } = await serverOnDeadDatabase();
    try {
      const live = await server.inject({ method: 'GET', url: '/health' });
      expect(live.statusCode).toBe(200);
      expect(JSON.parse(live.payload)).toEqual({ status: 'ok' });
      const ready = await server.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.headers['retry-after']).toBeDefined();
      expect(JSON.parse(ready.payload)).toMatchObject({
        error: 'not_ready',
        status: 'unavailable',
        checks: { database: 'down' },
      });
    } finally {
      await server.stop();
      await sql.end({ timeout: 1 });
    }
  });

  it('/health/ready answers 200 when the database answers', async () => {
    const config = { ...loadConfig({ LOYALTY_SECRET_KEY: TEST_SECRET_KEY }), fixtures: 'none' };
    const full = await createServer({ sql: db.sql, config, log: () => {} });
    await full.initialize();
    const ready = await full.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(JSON.parse(ready.payload)).toEqual({
      status: 'ok',
      checks: { database: 'ok', migrations: 'ok', clock: 'ok' },
    });
  });
});
