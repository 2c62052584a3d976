import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { TEST_SECRET_KEY } from '#test-helpers/server.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../lib/logger.js';
import { createServer } from '../server.js';

/** Issue 14 item 4: one access line per request, with chosen fields only. */
let db: TestDatabase;
let server: Server;
let out: string[] = [];
const records = () => out.map((line) => JSON.parse(line) as Record<string, unknown>);
const accessLines = () => records().filter((r) => r.msg === 'request completed');

beforeAll(async () => {
  db = await createTestDatabase();
  const config = {
    ...loadConfig({}),
    secretKey: TEST_SECRET_KEY,
    rateLimitIp: 100_000,
    rateLimitToken: 100_000,
    fixtures: 'none',
  };
  const logger = createLogger({ level: 'info' }, { write: (line: string) => void out.push(line) });
  server = await createServer({ sql: db.sql, config, log: () => {}, logger });
  await server.initialize();
});
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});
beforeEach(() => {
  out = [];
});

const tokenOf = async () => {
  const res = await server.inject({
    method: 'POST',
    url: '/oauth/token',
    payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
  });
  expect(res.statusCode).toBe(200);
  return (JSON.parse(res.payload) as { access_token: string }).access_token;
};

describe('access log', () => {
  it('writes one line per request with method, route template, status, duration, request id, client and organization', async () => {
    const token = await tokenOf();
    out = [];
    const res = await server.inject({
      method: 'GET',
      url: '/tags',
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'log-test-1' },
    });
    expect(res.statusCode).toBe(200);
    const lines = accessLines();
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/tags',
      status: 200,
      request_id: 'log-test-1',
      client_id: 'acme-admin',
    });
    expect(typeof line.duration_ms).toBe('number');
    expect(line.organization_id).toEqual(expect.any(String));
    // Exactly these fields besides pino's own (level, time, pid, msg).
    expect(Object.keys(line).sort()).toEqual([
      'client_id',
      'duration_ms',
      'level',
      'method',
      'msg',
      'organization_id',
      'pid',
      'request_id',
      'route',
      'status',
      'time',
    ]);
  });

  it('names the route template, not the path, and `unmatched` for no route; no client before authentication', async () => {
    await server.inject({ method: 'GET', url: '/members/7c9e6679-7425-40de-944b-e07fc1f90ae7' });
    await server.inject({ method: 'GET', url: '/no-such-route?email=lost@example.org' });
    const [member, missing] = accessLines();
    expect(member).toMatchObject({ method: 'GET', route: '/members/{uuid}', status: 401 });
    expect(member).not.toHaveProperty('client_id');
    expect(missing).toMatchObject({ method: 'GET', route: 'unmatched', status: 404 });
  });

  it('never shows the token, the query string (an e-mail), headers or the body', async () => {
    const token = await tokenOf();
    const tokenLog = out.join('');
    expect(tokenLog).not.toContain('acme-admin-secret');
    expect(tokenLog).not.toContain(token);
    out = [];
    await server.inject({
      method: 'GET',
      url: '/members/list?email=someone@example.org',
      headers: { authorization: `Bearer ${token}`, cookie: 'session=cookie-value' },
    });
    await server.inject({
      method: 'POST',
      url: '/members',
      headers: { authorization: `Bearer ${token}` },
      payload: { email: 'another@example.org', first_name: 'Secret' },
    });
    await server.inject({ method: 'GET', url: '/tags', headers: { authorization: `Bearer ${token}-wrong` } });
    const log = out.join('');
    expect(accessLines()).toHaveLength(3);
    for (const secret of [
      token,
      'someone@example.org',
      'another@example.org',
      'cookie-value',
      'Bearer',
      'example.org',
      '?',
    ])
      expect(log).not.toContain(secret);
  });

  it('redacts secret-looking keys of any record as a safety net', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    logger.info(
      {
        email: 'a@example.org',
        headers: { authorization: 'Bearer t0k3n', cookie: 'c' },
        body: { client_secret: 's3cr3t', password: 'pw', nested: { token: 'tk' } },
      },
      'test',
    );
    expect(lines.join('')).not.toMatch(/a@example\.org|t0k3n|s3cr3t|"pw"|"tk"/);
  });

  it('is silent at LOYALTY_LOG_LEVEL=silent', () => {
    const lines: string[] = [];
    createLogger({ level: 'silent' }, { write: (line: string) => void lines.push(line) }).error('x');
    expect(lines).toEqual([]);
  });
});
