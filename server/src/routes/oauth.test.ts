import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t.close());

const token = (payload: Record<string, string> | string, headers: Record<string, string> = {}) =>
  t.inject({ method: 'POST', url: '/oauth/token', payload, headers });

describe('POST /oauth/token', () => {
  it('issues an opaque bearer token with all the client abilities by default (JSON body)', async () => {
    const res = await token({
      grant_type: 'client_credentials',
      client_id: 'acme-admin',
      client_secret: 'acme-admin-secret',
    });
    expect(res.statusCode).toBe(200);
    const body = res.result as { token_type: string; access_token: string; expires_in: number; scope: string };
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);
    expect(body.access_token.length).toBeGreaterThanOrEqual(40);
    expect(body.scope.split(' ')).toContain('webhooks.store');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('accepts a form-encoded body and narrows the scope on request', async () => {
    const res = await token(
      'grant_type=client_credentials&client_id=acme-admin&client_secret=acme-admin-secret&scope=tags.get%20members.get',
      {
        'content-type': 'application/x-www-form-urlencoded',
      },
    );
    expect(res.statusCode).toBe(200);
    expect((res.result as { scope: string }).scope).toBe('tags.get members.get');
  });

  it('stores only a hash of the token', async () => {
    const res = await token({
      grant_type: 'client_credentials',
      client_id: 'acme-admin',
      client_secret: 'acme-admin-secret',
    });
    const { access_token } = res.result as { access_token: string };
    const rows = await t.db.sql`SELECT token_hash FROM access_tokens`;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(Buffer.from(row.token_hash as Buffer).toString('utf8')).not.toContain(access_token);
  });

  it('answers 401 invalid_client for a wrong secret or an unknown client', async () => {
    for (const payload of [
      { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'wrong' },
      { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' },
    ]) {
      const res = await token(payload);
      expect(res.statusCode).toBe(401);
      expect(res.result).toMatchObject({ error: 'invalid_client' });
    }
  });

  it('answers 400 invalid_scope for an ability the client lacks', async () => {
    const res = await token({
      grant_type: 'client_credentials',
      client_id: 'acme-readonly',
      client_secret: 'acme-readonly-secret',
      scope: 'tags.store',
    });
    expect(res.statusCode).toBe(400);
    expect(res.result).toMatchObject({ error: 'invalid_scope' });
  });

  it('answers 400 unsupported_grant_type for other grants', async () => {
    const res = await token({ grant_type: 'password', client_id: 'acme-admin', client_secret: 'acme-admin-secret' });
    expect(res.statusCode).toBe(400);
    expect(res.result).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('answers 400 invalid_request (the OAuth error shape) for a body its Content-Type cannot read', async () => {
    for (const [contentType, payload] of [
      ['application/json', 'grant_type=client_credentials&client_id=acme-admin'],
      ['application/json', '{"grant_type":'],
      ['application/x-www-form-urlencoded', '%'],
    ]) {
      const res = await token(payload!, { 'content-type': contentType! });
      expect(res.statusCode, res.payload).toBe(400);
      expect(JSON.parse(res.payload)).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('gives device clients a token for the device organization', async () => {
    const res = await token({
      grant_type: 'client_credentials',
      client_id: 'acme-pos-1',
      client_secret: 'acme-pos-1-secret',
    });
    expect(res.statusCode).toBe(200);
    const [row] = await t.db.sql`SELECT organization_ids, device_id FROM access_tokens WHERE client_id = 'acme-pos-1'`;
    expect(row).toMatchObject({ organization_ids: ['org-acme'], device_id: 'device-pos-1' });
  });
});

describe('health and the document', () => {
  it('GET /health answers ok without a token', async () => {
    const res = await t.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.result).toEqual({ status: 'ok' });
  });

  it('GET /openapi.yaml serves the OpenAPI document', async () => {
    const res = await t.inject({ method: 'GET', url: '/openapi.yaml' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('yaml');
    expect(res.payload).toMatch(/^openapi: 3\.1/m);
  });
});

describe('authentication', () => {
  it('answers 401 JSON without a token, with a malformed header, and with an unknown token', async () => {
    for (const authorization of [undefined, 'Basic abc', 'Bearer not-a-real-token']) {
      const res = await t.server.inject({
        method: 'GET',
        url: '/tags',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.payload)).toEqual({ message: 'Unauthenticated.', error: 'unauthenticated' });
    }
  });

  it('answers 404 JSON for an unknown path', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/no-such-thing' });
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.payload)).toMatchObject({ error: 'not_found' });
  });
});
