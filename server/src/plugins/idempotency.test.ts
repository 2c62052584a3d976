import { randomUUID } from 'node:crypto';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { pluginServer, remainingAfterStart } from '#test-helpers/plugin-server.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { loadConfig } from '../config.js';
import { sha256 } from '../lib/hash.js';
import { respondInTransaction } from '../lib/respond.js';
import { oauthRoutes } from '../routes/oauth.js';
import { createServer } from '../server.js';
import { claimIdempotencyKey, requestHash, scopeHash } from '../services/platform/idempotency.js';
import type { Principal } from '../services/platform/tokens.js';

let ts: TestServer;
beforeAll(async () => {
  ts = await createTestServer();
});
afterAll(() => ts?.close());

const newTag = () => ({ brand_id: 'brand-acme', external_reference: `ref-${randomUUID()}`, tag: 'Idempotent' });
const post = async (key: string | undefined, payload: object, extra: Partial<ServerInjectOptions> = {}) =>
  ts.inject({
    method: 'POST',
    url: '/tags',
    payload,
    ...extra,
    headers: {
      ...(await ts.auth('acme-admin')),
      ...(key !== undefined && { 'idempotency-key': key }),
      ...extra.headers,
    },
  });
const tagCount = async (ref: string) =>
  (await ts.db.sql`SELECT count(*)::int AS n FROM tags WHERE external_reference = ${ref}`)[0]!.n as number;

describe('Idempotency-Key on a route that answers through respondInTransaction', () => {
  it('replays the first 2xx response byte for byte with Idempotent-Replayed: true, without running the action again', async () => {
    const body = newTag();
    const first = await post('k-replay', body);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('k-replay', body);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(await tagCount(body.external_reference)).toBe(1);
    // Stored in the action's transaction: the row is done when the response leaves.
    const [row] = await ts.db
      .sql`SELECT state, response_status FROM idempotency_keys WHERE response_body = ${first.payload}`;
    expect(row).toEqual({ state: 'done', response_status: 201 });
  });

  it('accepts the key quoted (IETF draft) as the same key as bare', async () => {
    const body = newTag();
    const first = await post('"k-quoted"', body);
    const bare = await post('k-quoted', body);
    expect(bare.headers['idempotent-replayed']).toBe('true');
    expect(bare.payload).toBe(first.payload);
  });

  it('answers 422 idempotency_key_reuse for the same key with another body or query string', async () => {
    const body = newTag();
    await post('k-reuse', body);
    const otherBody = await post('k-reuse', { ...body, tag: 'Changed' });
    expect(otherBody.statusCode).toBe(422);
    expect(JSON.parse(otherBody.payload)).toEqual({ message: expect.any(String), error: 'idempotency_key_reuse' });
    const otherQuery = await post('k-reuse', body, { url: '/tags?x=1' });
    expect(otherQuery.statusCode).toBe(422);
    expect(JSON.parse(otherQuery.payload).error).toBe('idempotency_key_reuse');
  });

  it('counts the same JSON with its keys in another order (or other spacing) as the same request: replayed, not a reuse', async () => {
    const body = newTag();
    const json = { 'content-type': 'application/json' };
    const first = await post(
      'k-canonical',
      {},
      {
        payload: `{"brand_id":"brand-acme","external_reference":"${body.external_reference}","tag":"Idempotent"}`,
        headers: json,
      },
    );
    expect(first.statusCode).toBe(201);
    const reordered = await post(
      'k-canonical',
      {},
      {
        payload: `{ "tag": "Idempotent", "external_reference": "${body.external_reference}", "brand_id": "brand-acme" }`,
        headers: json,
      },
    );
    expect(reordered.statusCode).toBe(201);
    expect(reordered.headers['idempotent-replayed']).toBe('true');
    expect(reordered.payload).toBe(first.payload);
    expect(await tagCount(body.external_reference)).toBe(1);
  });

  it('scopes the key to the token, the method and the path', async () => {
    const body = newTag();
    await post('k-scope', body);
    const otherToken = await post('k-scope', body, { headers: await ts.auth('acme-admin', ['tags.store']) });
    // It ran (the reference is taken now), rather than replaying the other token's response.
    expect(otherToken.statusCode).toBe(422);
    expect(JSON.parse(otherToken.payload).error).toBe('validation_failed');
    const otherPath = await ts.inject({
      method: 'POST',
      url: '/tags/members/bulk',
      headers: { ...(await ts.auth('acme-admin')), 'idempotency-key': 'k-scope' },
      payload: { brand_id: 'brand-acme', tag_id: body.external_reference, users: [randomUUID()] },
    });
    expect(otherPath.statusCode).toBe(200);
    expect(otherPath.headers['idempotent-replayed']).toBeUndefined();
    const [tag] = await ts.db.sql`SELECT id FROM tags WHERE external_reference = ${body.external_reference}`;
    const otherMethod = await ts.inject({
      method: 'PUT',
      url: '/tags',
      headers: { ...(await ts.auth('acme-admin')), 'idempotency-key': 'k-scope' },
      payload: { tag_id: tag!.id, tag: 'Renamed' },
    });
    expect(otherMethod.statusCode).toBe(200);
  });

  it('answers 400 idempotency_key_invalid outside 1..255 characters, and nothing runs', async () => {
    for (const key of ['', '""', 'x'.repeat(256), 'a"b']) {
      const body = newTag();
      const res = await post(key, body);
      expect(res.statusCode, JSON.stringify(key)).toBe(400);
      expect(JSON.parse(res.payload)).toEqual({ message: expect.any(String), error: 'idempotency_key_invalid' });
      expect(await tagCount(body.external_reference)).toBe(0);
    }
    expect((await post('x'.repeat(255), newTag())).statusCode).toBe(201);
  });

  it('releases the key after a 4xx, so it can be used again', async () => {
    const failed = await post('k-release', { ...newTag(), brand_id: 'brand-nope' });
    expect(failed.statusCode).toBe(404);
    const retried = await post('k-release', newTag());
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('takes over a key whose first request was abandoned by a crash (locked_until passed)', async () => {
    const body = newTag();
    const token = (await ts.auth('acme-admin')).authorization.slice('Bearer '.length);
    const scope = scopeHash({
      tokenHash: sha256(token).toString('base64'),
      method: 'POST',
      path: '/tags',
      key: 'k-crash',
    });
    await claimIdempotencyKey(ts.db.sql, { scope, request: requestHash(body, ''), lockSeconds: 60 });
    const running = await post('k-crash', body);
    expect(running.statusCode).toBe(409);
    expect(JSON.parse(running.payload)).toEqual({ message: expect.any(String), error: 'idempotency_in_progress' });
    expect(running.headers['retry-after']).toBe('1');
    await ts.db.sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE scope_hash = ${scope}`;
    expect((await post('k-crash', body)).statusCode).toBe(201);
  });

  it('changes nothing without the header, on GET and DELETE, and on POST /oauth/token', async () => {
    const before = (await ts.db.sql`SELECT count(*)::int AS n FROM idempotency_keys`)[0]!.n;
    await post(undefined, newTag());
    const headers = { ...(await ts.auth('acme-admin')), 'idempotency-key': 'k-ignored' };
    expect((await ts.inject({ method: 'GET', url: '/tags', headers })).headers['idempotent-replayed']).toBeUndefined();
    expect((await ts.inject({ method: 'GET', url: '/tags', headers })).headers['idempotent-replayed']).toBeUndefined();
    const tokenRequest = {
      method: 'POST',
      url: '/oauth/token',
      headers: { 'idempotency-key': 'k-token' },
      payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
    };
    const a = JSON.parse((await ts.inject(tokenRequest)).payload).access_token;
    const b = JSON.parse((await ts.inject(tokenRequest)).payload).access_token;
    expect(a).not.toBe(b);
    expect((await ts.db.sql`SELECT count(*)::int AS n FROM idempotency_keys`)[0]!.n).toBe(before);
  });

  it('hashes a body nested 100,000 levels deep without overflowing the stack: the same answer as without the key', async () => {
    const depth = 100_000;
    const nested = (ref: string) =>
      `{"brand_id":"brand-acme","external_reference":"${ref}","tag":"Deep","extra":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const send = async (key: string | undefined, ref: string) =>
      post(key, {}, { payload: nested(ref), headers: { 'content-type': 'application/json' } });
    const without = await send(undefined, `ref-${randomUUID()}`);
    expect(without.statusCode).toBe(201);
    const ref = `ref-${randomUUID()}`;
    const withKey = await send('k-deep', ref);
    expect(withKey.statusCode).toBeLessThan(500);
    expect(withKey.statusCode).toBe(without.statusCode);
    if (withKey.statusCode === 201) {
      const again = await send('k-deep', ref);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await tagCount(ref)).toBe(1);
    }
  });
});

describe('Idempotency-Key on routes that answer without respondInTransaction', () => {
  let db: TestDatabase;
  let server: Server;
  let gate: Promise<void> = Promise.resolve();
  let runs = 0;
  let failNext = false;

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = { ...loadConfig({}), rateLimitIp: 100_000, rateLimitToken: 100_000, fixtures: 'none' };
    server = await createServer({
      sql: db.sql,
      config,
      log: () => {},
      routes: [
        ...oauthRoutes,
        {
          method: 'POST',
          path: '/tags',
          handler: async (_request, h) => {
            runs++;
            await gate;
            if (failNext) throw new Error('boom');
            return h
              .response({ success: true, run: runs, at: new Date() })
              .code(201)
              .header('location', `/somewhere/${runs}`);
          },
        },
        {
          method: 'PUT',
          path: '/tags',
          handler: (request, h) =>
            respondInTransaction(request, h, async (tx) => {
              await tx`SELECT 1`;
              throw new Error('failed after the action');
            }),
        },
      ],
    });
    await server.initialize();
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  const auth = async () => {
    const res = await server.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: 'acme-admin', client_secret: 'acme-admin-secret' },
    });
    return { authorization: `Bearer ${JSON.parse(res.payload).access_token}` };
  };
  const body = { brand_id: 'brand-acme', external_reference: 'x', tag: 'X' };

  it('stores the response in onPreResponse and replays status, headers and bytes', async () => {
    const headers = { ...(await auth()), 'idempotency-key': 'plain-1' };
    const first = await server.inject({ method: 'POST', url: '/tags', headers, payload: body });
    const again = await server.inject({ method: 'POST', url: '/tags', headers, payload: body });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(again.payload).run).toBe(runs);
  });

  it('answers 409 idempotency_in_progress with Retry-After while the first request runs', async () => {
    const headers = { ...(await auth()), 'idempotency-key': 'plain-2' };
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const first = server.inject({ method: 'POST', url: '/tags', headers, payload: body });
    while (runs === 0 || !(await db.sql`SELECT 1 FROM idempotency_keys WHERE state = 'in_progress'`).length)
      await new Promise((r) => setTimeout(r, 5));
    const second = await server.inject({ method: 'POST', url: '/tags', headers, payload: body });
    expect(second.statusCode).toBe(409);
    expect(second.headers['retry-after']).toBe('1');
    expect(JSON.parse(second.payload).error).toBe('idempotency_in_progress');
    open();
    expect((await first).statusCode).toBe(201);
    expect(
      (await server.inject({ method: 'POST', url: '/tags', headers, payload: body })).headers['idempotent-replayed'],
    ).toBe('true');
  });

  it('releases the key after a 5xx, also when the transaction failed after its action', async () => {
    const headers = { ...(await auth()), 'idempotency-key': 'plain-3' };
    failNext = true;
    expect((await server.inject({ method: 'POST', url: '/tags', headers, payload: body })).statusCode).toBe(500);
    failNext = false;
    const retried = await server.inject({ method: 'POST', url: '/tags', headers, payload: body });
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();

    const put = { method: 'PUT', url: '/tags', headers, payload: { tag_id: randomUUID() } } as const;
    expect((await server.inject(put)).statusCode).toBe(500);
    expect((await server.inject(put)).statusCode).toBe(500); // not 409: the key was released
    expect((await db.sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE state = 'in_progress'`)[0]!.n).toBe(0);
  });
});

describe('purge of expired keys', () => {
  it('runs every purgeIntervalMs while the server is started, and stops with it', async () => {
    const { idempotencyPlugin } = await import('./idempotency.js');
    const server = await pluginServer(idempotencyPlugin, { sql: ts.db.sql, purgeIntervalMs: 20 });
    const scope = scopeHash({ tokenHash: 'purge', method: 'POST', path: '/x', key: 'k' });
    await claimIdempotencyKey(ts.db.sql, { scope, request: requestHash({}, ''), lockSeconds: 60 });
    await ts.db.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE scope_hash = ${scope}`;
    const count = async () =>
      (await ts.db.sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE scope_hash = ${scope}`)[0]!.n;
    await new Promise((r) => setTimeout(r, 100));
    expect(await count()).toBe(1); // not started: no purge
    expect(await remainingAfterStart(server, count)).toBe(0);
  });
});

describe('a claim under a request that runs longer than the lock', () => {
  /** The plugin alone, on a server with a stand-in token and one slow route; a lock of 0.3 s. */
  // A lock of 1 s (a beat every 333 ms): a claim lapses only when no beat lands for 667 ms, which a
  // loaded 2-core CI machine can pause a process for; 0.3 s let a retry take over a live claim there.
  async function slowServer(db: TestDatabase, runMs: number, timeoutMs: number | false = false, lockSeconds = 1) {
    const { default: Hapi } = await import('@hapi/hapi');
    const { idempotencyPlugin } = await import('./idempotency.js');
    const server = Hapi.server({ routes: { timeout: { server: timeoutMs } } });
    server.auth.scheme('stand-in', () => ({
      authenticate: (_request, h) =>
        h.authenticated({ credentials: { user: { tokenHash: 'slow-token' } as Principal } }),
    }));
    server.auth.strategy('stand-in', 'stand-in');
    server.auth.default('stand-in');
    await server.register({ plugin: idempotencyPlugin, options: { sql: db.sql, lockSeconds } });
    const runs = { count: 0 };
    server.route({
      method: 'POST',
      path: '/slow',
      handler: async (_request, h) => {
        runs.count++;
        await new Promise((r) => setTimeout(r, runMs));
        return h.response({ run: runs.count }).code(201);
      },
    });
    await server.initialize();
    return { server, runs };
  }

  const slowRequest = (key: string) =>
    ({ method: 'POST', url: '/slow', headers: { 'idempotency-key': key }, payload: { a: 1 } }) as const;

  it('is kept alive while the request runs: a second request with the key long past the lock gets 409, and the action runs once', async () => {
    const db = await createTestDatabase();
    try {
      const { server, runs } = await slowServer(db, 3500);
      const request = slowRequest('slow-1');
      const first = server.inject(request);
      await new Promise((r) => setTimeout(r, 2500)); // more than two lock lifetimes
      const second = await server.inject(request);
      expect(second.statusCode).toBe(409);
      expect(JSON.parse(second.payload).error).toBe('idempotency_in_progress');
      expect((await first).statusCode).toBe(201);
      const third = await server.inject(request);
      expect(third.headers['idempotent-replayed']).toBe('true');
      expect(runs.count).toBe(1);
    } finally {
      await db.drop();
    }
  });

  it('is kept by a heartbeat that waited on the database past the lock: a retry meanwhile gets 409, and the action runs once', async () => {
    const db = await createTestDatabase();
    try {
      const { server, runs } = await slowServer(db, 2000, false, 0.3);
      const request = slowRequest('slow-stall');
      const first = server.inject(request);
      while (runs.count === 0) await new Promise((r) => setTimeout(r, 10));
      // A slow database: the claim's row is locked for 1 s, more than three lock lifetimes, so the
      // heartbeat's UPDATE waits and the claim's locked_until passes. The retry comes in the stall.
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const stall = db.sql.begin(async (tx) => {
        await tx`SELECT 1 FROM idempotency_keys FOR UPDATE`;
        locked();
        await new Promise((r) => setTimeout(r, 1000));
      });
      await isLocked;
      await new Promise((r) => setTimeout(r, 600)); // past the lock of 0.3 s
      const retry = server.inject(request);
      await stall;
      const during = await retry;
      expect(during.statusCode, during.payload).toBe(409);
      expect((await first).statusCode).toBe(201);
      expect(runs.count).toBe(1);
    } finally {
      await db.drop();
    }
  });

  it('outlives a client that went away: a retry gets 409 while the handler runs, then the replay of what it did', async () => {
    const db = await createTestDatabase();
    const { server, runs } = await slowServer(db, 3000);
    await server.start();
    try {
      const { request: httpRequest } = await import('node:http');
      const sent = httpRequest(`${server.info.uri}/slow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'slow-gone' },
      });
      sent.on('error', () => {});
      sent.end('{"a":1}');
      while (runs.count === 0) await new Promise((r) => setTimeout(r, 10));
      sent.destroy(); // the client goes away while the handler runs
      const request = slowRequest('slow-gone');
      await new Promise((r) => setTimeout(r, 1500)); // past the lock of 1 s
      expect((await server.inject(request)).statusCode).toBe(409);
      await new Promise((r) => setTimeout(r, 1800));
      const later = await server.inject(request);
      expect(later.statusCode).toBe(201);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(runs.count).toBe(1);
    } finally {
      await server.stop();
      await db.drop();
    }
  });

  it('outlives a response sent before the handler finished (request timeout): a retry gets 409 until it finishes, then the replay of what it did', async () => {
    const db = await createTestDatabase();
    try {
      // A request timeout of 0.4 s under a handler of 3 s (three lock lifetimes): retries come while
      // the handler still runs. A retry may itself run past 0.4 s on a busy machine (503, tried
      // again); what may not happen is a second run of the handler, or anything but 409 before the replay.
      const { server, runs } = await slowServer(db, 3000, 400);
      const request = slowRequest('slow-timeout');
      expect((await server.inject(request)).statusCode).toBe(503); // the handler runs on
      const answers: { statusCode: number; payload: string }[] = [];
      let later = await server.inject(request);
      for (const deadline = Date.now() + 15_000; later.statusCode !== 201 && Date.now() < deadline; ) {
        answers.push(later);
        await new Promise((r) => setTimeout(r, 100));
        later = await server.inject(request);
      }
      const inProgress = answers.filter((a) => a.statusCode === 409);
      expect(inProgress.length, 'a retry while the handler ran got 409').toBeGreaterThan(0);
      expect(answers.filter((a) => a.statusCode !== 409 && a.statusCode !== 503)).toEqual([]);
      expect(JSON.parse(inProgress[0]!.payload).error).toBe('idempotency_in_progress');
      expect(later.statusCode).toBe(201);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(JSON.parse(later.payload)).toEqual({ run: 1 });
      expect(runs.count).toBe(1);
    } finally {
      await db.drop();
    }
  });
  it('frees a key claimed after its request was answered (the request timed out while the claim waited): a retry runs', async () => {
    const db = await createTestDatabase();
    try {
      const { server, runs } = await slowServer(db, 50, 400);
      const key = 'slow-claim';
      const scope = scopeHash({ tokenHash: 'slow-token', method: 'POST', path: '/slow', key });
      const request = slowRequest(key);
      // An uncommitted row of the same key makes the claim's INSERT wait past the 0.4 s timeout (hapi
      // answers 503 and runs no handler); the rollback at 1 s then lets the claim through.
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      const blocker = db.sql
        .begin(async (tx) => {
          await tx`INSERT INTO idempotency_keys (scope_hash, request_hash, state, locked_until, expires_at)
                   VALUES (${scope}, ${requestHash({ a: 1 }, '')}, 'in_progress', now() + interval '1 hour', now() + interval '1 day')`;
          holding();
          await new Promise((r) => setTimeout(r, 1000));
          throw new Error('rolled back');
        })
        .catch(() => {});
      await held;
      const first = await server.inject(request);
      expect(first.statusCode).toBe(503);
      await blocker;
      await new Promise((r) => setTimeout(r, 200)); // the claim lands, after the 503
      expect(runs.count).toBe(0);
      // Before the fix the claim was kept alive by its heartbeat with no handler to end it: 409 for as long as the process lived.
      const answers: number[] = [];
      let retry = await server.inject(request);
      for (const deadline = Date.now() + 5_000; retry.statusCode !== 201 && Date.now() < deadline; ) {
        answers.push(retry.statusCode);
        await new Promise((r) => setTimeout(r, 100));
        retry = await server.inject(request);
      }
      expect(retry.statusCode, `answers before: ${answers.join(', ')}`).toBe(201);
      expect(JSON.parse(retry.payload)).toEqual({ run: 1 });
      expect(runs.count).toBe(1);
    } finally {
      await db.drop();
    }
  });
});
