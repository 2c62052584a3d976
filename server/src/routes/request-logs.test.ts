import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, type TestServer } from '#test-helpers/server.js';
import { untilOwnFeedHorizon } from '#test-helpers/db.js';
import { until } from '#test-helpers/until.js';

// Issue 29 item 4: GET /request-logs, one organization's API requests, written by the server.

let t: TestServer;
type Auth = { authorization: string };
let admin: Auth;
let readonly: Auth;
let globex: Auth;
beforeAll(async () => {
  t = await createTestServer();
  [admin, readonly, globex] = await Promise.all([
    t.auth('acme-admin'),
    t.auth('acme-readonly'),
    t.auth('globex-admin'),
  ]);
});
afterAll(() => t?.close());

type Entry = {
  id: string;
  created_at: string;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  request_id: string;
  client_id: string | null;
  error_code: string | null;
};
type Page = { data: Entry[]; next_cursor: string | null; follow_cursor: string };

const call = async (method: string, url: string, auth: Auth, requestId: string, payload?: object) => {
  const res = await t.inject({ method, url, headers: { ...auth, 'x-request-id': requestId }, payload });
  return res.statusCode;
};
const get = async (query: string, auth: Auth = admin) => {
  const res = await t.inject({ method: 'GET', url: `/request-logs${query ? `?${query}` : ''}`, headers: auth });
  return { status: res.statusCode, body: JSON.parse(res.payload) as Page & Json };
};
const flush = () => t.server.plugins['loyalty-request-log-store'].buffer.flush();
/** The entries of `query` once they hold every request id of `ids` (the log is written in batches). */
const logged = async (ids: string[], query = 'limit=100', auth: Auth = admin) => {
  await flush();
  return until(async () => {
    const { body } = await get(query, auth);
    return ids.every((id) => body.data.some((e) => e.request_id === id)) && body;
  });
};
const run = `r${Date.now().toString(36)}`;

describe('GET /request-logs', () => {
  it("logs each request of the organization's tokens with its fields, nothing of URLs, bodies, tokens or e-mail addresses", async () => {
    expect(await call('GET', '/tags?brand_id=brand-acme', admin, `${run}-tags`)).toBe(200);
    const email = 'secret.person@example.test';
    expect(
      await call('POST', '/members/uuid', readonly, `${run}-search`, { brand_id: 'brand-acme', emails: [email] }),
    ).toBe(200);
    // An e-mail address in a query string: the route template only.
    expect(
      await call('GET', `/tags?brand_id=brand-acme&email=${encodeURIComponent(email)}`, admin, `${run}-query`),
    ).toBeLessThan(500);
    expect(await call('POST', '/members', admin, `${run}-bad`, { brand_id: 'brand-acme', email: `x ${email}` })).toBe(
      422,
    );
    expect(
      await call('GET', '/members/00000000-0000-4000-8000-000000000000?brand_id=brand-acme', admin, `${run}-404`),
    ).toBe(404);
    const page = await logged([`${run}-tags`, `${run}-search`, `${run}-query`, `${run}-bad`, `${run}-404`]);
    const byId = new Map(page.data.map((e) => [e.request_id, e]));
    expect(byId.get(`${run}-tags`)).toEqual({
      id: expect.stringMatching(/^\d+\.\d+$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      method: 'GET',
      route: '/tags',
      status: 200,
      duration_ms: expect.any(Number),
      request_id: `${run}-tags`,
      client_id: 'acme-admin',
      error_code: null,
    });
    expect(byId.get(`${run}-bad`)).toMatchObject({
      method: 'POST',
      route: '/members',
      status: 422,
      error_code: 'validation_failed',
    });
    expect(byId.get(`${run}-404`)).toMatchObject({ route: '/members/{uuid}', status: 404, error_code: 'not_found' });
    expect(byId.get(`${run}-search`)).toMatchObject({
      client_id: 'acme-readonly',
      method: 'POST',
      route: '/members/uuid',
      status: 200,
    });
    expect(byId.get(`${run}-query`)).toMatchObject({ route: '/tags' });
    // Newest first.
    expect(page.data.map((e) => e.request_id).indexOf(`${run}-404`)).toBeLessThan(
      page.data.map((e) => e.request_id).indexOf(`${run}-tags`),
    );
    // Nothing in the stored rows but those fields: no query string, no e-mail, no token.
    const stored = (await t.db.sql<{ j: string }[]>`SELECT row_to_json(l)::text AS j FROM request_logs l`)
      .map((r) => r.j)
      .join('\n');
    expect(stored).toContain(`${run}-query`);
    const token = admin.authorization.replace('Bearer ', '');
    for (const secret of [email, '@', '?', 'brand_id=', token, 'acme-admin-secret'])
      expect(stored).not.toContain(secret);
  });

  it('shows an organization only its own requests', async () => {
    expect(await call('GET', '/tags?brand_id=brand-globex', globex, `${run}-globex`)).toBe(200);
    expect(await call('GET', '/tags?brand_id=brand-acme', admin, `${run}-acme`)).toBe(200);
    const theirs = await logged([`${run}-globex`], 'limit=100', globex);
    expect(theirs.data.every((e) => e.client_id === 'globex-admin')).toBe(true);
    const ours = await logged([`${run}-acme`]);
    expect(ours.data.some((e) => e.request_id === `${run}-globex`)).toBe(false);
    // Another organization's id is not found, its request id finds nothing.
    expect((await get('organization_id=org-acme', globex)).status).toBe(404);
    expect((await get(`request_id=${run}-acme`, globex)).body.data).toEqual([]);
  });

  it('filters by status class or code, method, route template or its prefix, request id and time', async () => {
    const p = `${run}-f`;
    await call('GET', '/tags?brand_id=brand-acme', admin, `${p}1`);
    await call('POST', '/members', admin, `${p}2`, { brand_id: 'brand-acme', email: 'nope' });
    await call('GET', '/members/00000000-0000-4000-8000-000000000000?brand_id=brand-acme', admin, `${p}3`);
    await logged([`${p}1`, `${p}2`, `${p}3`]);
    const ids = async (query: string) =>
      (await get(`limit=100&${query}`)).body.data
        .map((e) => e.request_id)
        .filter((id) => id.startsWith(p))
        .sort();
    expect(await ids('status=4xx')).toEqual([`${p}2`, `${p}3`]);
    expect(await ids('status=2xx')).toEqual([`${p}1`]);
    expect(await ids('status=404')).toEqual([`${p}3`]);
    expect(await ids('method=POST')).toEqual([`${p}2`]);
    expect(await ids('path=/members')).toEqual([`${p}2`, `${p}3`]);
    expect(await ids(`path=${encodeURIComponent('/members/{uuid}')}`)).toEqual([`${p}3`]);
    expect(await ids('path=/mem')).toEqual([]);
    expect(await ids('path=/tags')).toEqual([`${p}1`]);
    expect(await ids(`request_id=${p}2`)).toEqual([`${p}2`]);
    expect(await ids(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await ids(`since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`)).toHaveLength(3);
  });

  it('logs a HEAD request as HEAD, and method=HEAD finds it', async () => {
    const p = `${run}-head`;
    // server.inject: a HEAD answer has no body for the contract check to read.
    const head = await t.server.inject({
      method: 'HEAD',
      url: '/tags?brand_id=brand-acme',
      headers: { ...admin, 'x-request-id': `${p}1` },
    });
    expect(head.statusCode).toBe(200);
    await call('GET', '/tags?brand_id=brand-acme', admin, `${p}2`);
    await logged([`${p}1`, `${p}2`]);
    const { status, body } = await get('limit=100&method=HEAD');
    expect(status).toBe(200);
    expect(body.data.filter((e) => e.request_id.startsWith(p)).map((e) => [e.request_id, e.method])).toEqual([
      [`${p}1`, 'HEAD'],
    ]);
  });

  it('pages back by cursor, newest first, and follows with after (oldest first), a long poll woken by a request', async () => {
    const p = `${run}-p`;
    for (let i = 1; i <= 3; i++) await call('GET', '/tags?brand_id=brand-acme', admin, `${p}${i}`);
    await logged([`${p}1`, `${p}2`, `${p}3`]);
    const seen: string[] = [];
    let cursor: string | null = null;
    const q = `path=/tags&since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`;
    do {
      const { body } = await get(`${q}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(body.data.length).toBeLessThanOrEqual(1);
      seen.push(...body.data.map((e) => e.request_id));
      cursor = body.next_cursor;
    } while (cursor);
    const mine = seen.filter((id) => id.startsWith(p));
    expect(mine).toEqual([`${p}3`, `${p}2`, `${p}1`]);
    expect(new Set(seen).size).toBe(seen.length);

    const start = (await get('limit=1')).body.follow_cursor;
    expect((await get(`after=${start}`)).body.data).toEqual([]);
    // A long poll, answered when a request of acme is written (and not before: globex's does not end it).
    const poll = get(`after=${start}&wait=20`).then((res) => ({ ...res, at: Date.now() }));
    await call('GET', '/tags?brand_id=brand-globex', globex, `${p}-globex`);
    await flush();
    await call('GET', '/tags?brand_id=brand-acme', admin, `${p}4`);
    await call('GET', '/tags?brand_id=brand-acme', admin, `${p}5`);
    await flush();
    // Written entries show once every older transaction of the PostgreSQL server has ended,
    // another test file's too: timed from then (docs/server.md, a shared PostgreSQL).
    await untilOwnFeedHorizon(t.db.sql);
    const shown = Date.now();
    const { status, body, at } = await poll;
    expect(status).toBe(200);
    expect(at - shown).toBeLessThan(3000);
    expect(body.data.map((e) => e.request_id)[0]).toBe(`${p}4`);
    expect(body.data.some((e) => e.request_id === `${p}-globex`)).toBe(false);
    const rest = await until(async () => {
      const next = await get(`after=${body.next_cursor}`);
      return [...body.data, ...next.body.data].some((e) => e.request_id === `${p}5`) && next.body;
    });
    expect(rest.next_cursor).toEqual(expect.any(String));
    // Oldest first when following.
    const both = (await get(`after=${start}&limit=100`)).body.data.map((e) => e.request_id);
    expect(both.indexOf(`${p}4`)).toBeLessThan(both.indexOf(`${p}5`));
  });

  it('does not log its own requests', async () => {
    const res = await t.inject({
      method: 'GET',
      url: '/request-logs',
      headers: { ...admin, 'x-request-id': `${run}-self` },
    });
    expect(res.statusCode).toBe(200);
    await flush();
    const rows = await t.db.sql`SELECT 1 FROM request_logs WHERE request_id = ${`${run}-self`}`;
    expect(rows).toHaveLength(0);
  });

  it('answers 422 naming the field for a filter of the wrong shape', async () => {
    const cases: [string, string][] = [
      ['status=4x', 'status'],
      ['status=600', 'status'],
      ['method=FETCH', 'method'],
      ['path=members', 'path'],
      ['request_id=a%40b', 'request_id'],
      ['since=yesterday', 'since'],
      ['cursor=abc', 'cursor'],
      ['cursor=1.99999999999999999999', 'cursor'],
      ['after=1.1&cursor=1.1', 'after'],
      ['wait=5', 'wait'],
      ['limit=0', 'limit'],
      ['wait=31&after=1.1', 'wait'],
    ];
    for (const [query, field] of cases) {
      const { status, body } = await get(query);
      expect(status, query).toBe(422);
      expect(body.error, query).toBe('validation_failed');
      expect(Object.keys(body.errors ?? {}), query).toContain(field);
    }
  });

  it('asks for webhooks.get', async () => {
    const { status } = await get('', await t.auth('acme-admin', ['tags.get']));
    expect(status).toBe(403);
    expect((await get('', readonly)).status).toBe(200);
  });
});

describe('a sandbox reset', () => {
  it("removes the organization's request log, not another organization's", async () => {
    const sandbox = await createTestServer({ sandbox: true });
    try {
      const send = async (client: string, brand: string, id: string) =>
        (
          await sandbox.inject({
            method: 'GET',
            url: `/tags?brand_id=${brand}`,
            headers: { ...(await sandbox.auth(client)), 'x-request-id': id },
          })
        ).statusCode;
      expect(await send('acme-admin', 'brand-acme', 'before-reset-acme')).toBe(200);
      expect(await send('globex-admin', 'brand-globex', 'before-reset-globex')).toBe(200);
      // No flush here: the reset writes what waits before it deletes.
      const reset = await sandbox.inject({
        method: 'POST',
        url: '/sandbox/reset',
        headers: { ...(await sandbox.auth('acme-admin')), 'x-request-id': 'the-reset' },
        payload: {},
      });
      expect(reset.statusCode).toBe(200);
      await sandbox.server.plugins['loyalty-request-log-store'].buffer.flush();
      const rows = await sandbox.db.sql<{ organization_id: string; request_id: string }[]>`
        SELECT organization_id, request_id FROM request_logs ORDER BY organization_id, request_id`;
      // The reset's own request is logged after it.
      expect(rows).toEqual([
        { organization_id: 'org-acme', request_id: 'the-reset' },
        { organization_id: 'org-globex', request_id: 'before-reset-globex' },
      ]);
    } finally {
      await sandbox.close();
    }
  });
});
