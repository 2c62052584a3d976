import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { TEST_SECRET_KEY } from '../../../test/helpers/server.js';
import { loadConfig } from '../config.js';
import { createServer } from '../server.js';

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
  const server = await createServer({ sql: db.sql, config, log: (m) => logged.push(m), routes: [{ method: 'GET', path: '/health', handler }] });
  await server.initialize();
  return { server, logged };
}

describe('timeouts', () => {
  it("answer hapi's request timeout with a documented 503 and Retry-After, not an internal error", async () => {
    const { server, logged } = await serverWith(() => new Promise((r) => setTimeout(() => r({ status: 'ok' }), 500)), 100);
    const res = await server.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(JSON.parse(res.payload)).toEqual({ message: expect.stringMatching(/too long/), error: 'request_timeout' });
    expect(logged.join('\n')).not.toMatch(/internal error/);
  });

  it("answer PostgreSQL's statement timeout the same way", async () => {
    const { server } = await serverWith(() => db.sql.begin(async (tx) => {
      await tx`SET LOCAL statement_timeout = 50`;
      await tx`SELECT pg_sleep(1)`;
    }), 5000);
    const res = await server.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.payload)).toMatchObject({ error: 'request_timeout' });
  });
});
