// End to end: members through the built `@loyalty/sdk` against the real reference server:
// create, idempotency keys (replays, a lost response retried), bulk sign-ups in chunks with a
// per-chunk report, paging through members and a member's coupon passes.
import {
  createLoyaltyClient,
  importSignups,
  iterateMemberCoupons,
  iterateMembers,
  toLoyaltyError,
  unwrap,
  wasReplayed,
  type LoyaltyClient,
  type Signup,
} from '@loyalty/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const brandId = 'brand-acme';
const credentials = { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' };

let live: LiveServer;
let client: LoyaltyClient;
/** Every request the client sent: method, path, Idempotency-Key, status ('lost' when the response was dropped). */
const wire: Array<{ method: string; path: string; key: string | null; status: number | 'lost' }> = [];
/** Set to make the transport drop the next API response after the server has answered (a lost response). */
let loseNextResponse = false;

beforeAll(async () => {
  live = await startLiveServer();
  client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: credentials,
    retry: { baseDelayMs: 50 },
    fetch: async (request) => {
      const entry = {
        method: request.method,
        path: new URL(request.url).pathname,
        key: request.headers.get('idempotency-key'),
      };
      const response = await fetch(request);
      if (loseNextResponse && !entry.path.endsWith('/oauth/token')) {
        loseNextResponse = false;
        wire.push({ ...entry, status: 'lost' });
        await response.body?.cancel();
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      wire.push({ ...entry, status: response.status });
      return response;
    },
  });
});
afterAll(() => live?.close());

const sent = (from: number) => wire.slice(from).filter((w) => !w.path.endsWith('/oauth/token'));

let ada: string;

it('creates a member; the same Idempotency-Key replays the first answer, another key sees the member exists', async () => {
  const body = {
    brand_id: brandId,
    email: 'Ada@Example.org',
    first_name: 'Ada',
    last_name: 'Lovelace',
    unsubscribed: false,
  };
  const headers = { 'Idempotency-Key': 'create-ada-1' };
  const first = await client.POST('/members', { body, headers });
  expect(first.response.status).toBe(201);
  expect(wasReplayed(first)).toBe(false);
  const created = unwrap(first);
  expect(created).toMatchObject({ success: true, created: true });
  ada = created.member_id;
  expect(created.identifier).toBe(ada);

  const replay = await client.POST('/members', { body, headers });
  expect(replay.response.status).toBe(201); // the stored answer, not "already exists"
  expect(wasReplayed(replay)).toBe(true);
  expect(replay.data).toEqual(created);

  const w = wire.length;
  const fresh = await client.POST('/members', { body });
  expect(fresh.response.status).toBe(200);
  expect(wasReplayed(fresh)).toBe(false);
  expect(fresh.data).toMatchObject({ created: false, member_id: ada });
  // The SDK put a key of its own on the call.
  expect(sent(w)).toEqual([
    { method: 'POST', path: '/members', key: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 200 },
  ]);

  const reused = toLoyaltyError(
    await client.POST('/members', { body: { ...body, email: 'grace@example.org' }, headers }),
  );
  expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reuse' });

  const rows = await live.db
    .sql`SELECT m.id::text, m.email, m.first_name FROM members m JOIN brand_members b ON b.member_id = m.id WHERE b.brand_id = ${brandId}`;
  expect(rows).toEqual([{ id: ada, email: 'Ada@Example.org', first_name: 'Ada' }]);
});

const couponPasses = async (member: string) =>
  (
    await live.db
      .sql`SELECT pass_code FROM passes WHERE member_id = ${member} AND coupon_id = 'coupon-welcome' ORDER BY pass_code`
  ).map((r) => r.pass_code as string);

it('a coupon pass issued with a key is issued once: replayed on a repeat, and a lost response is retried with the same key', async () => {
  const issue = (key?: string) =>
    client.POST('/members/{uuid}/passes', {
      params: { path: { uuid: ada } },
      body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
      ...(key && { headers: { 'Idempotency-Key': key } }),
    });
  const first = await issue(`welcome-${ada}`);
  expect(first.response.status).toBe(201);
  const again = await issue(`welcome-${ada}`);
  expect(wasReplayed(again)).toBe(true);
  expect(again.data).toEqual(first.data);
  expect(await couponPasses(ada)).toEqual([first.data!.pass_code]);

  // The server issues the pass, the response is lost on the way back; the SDK retries with the same
  // (SDK-made) key and gets the stored answer: one more pass, not two.
  const w = wire.length;
  loseNextResponse = true;
  const afterLoss = await issue();
  expect(afterLoss.response.status).toBe(201);
  expect(wasReplayed(afterLoss)).toBe(true);
  const attempts = sent(w);
  expect(attempts.map((a) => a.status)).toEqual(['lost', 201]);
  expect(attempts[1]!.key).toBe(attempts[0]!.key);
  expect(await couponPasses(ada)).toEqual([first.data!.pass_code, afterLoss.data!.pass_code].sort());

  // Without a key of the caller's own, each call is a new action: a new pass.
  const third = unwrap(await issue());
  expect(await couponPasses(ada)).toHaveLength(3);
  expect(await couponPasses(ada)).toContain(third.pass_code);
});

it('a key is scoped to the token: another client with the same credentials (a new token) runs the action again', async () => {
  // What "safe across restarts" has to reckon with: a restarted process fetches a new token.
  const before = await couponPasses(ada);
  const other = createLoyaltyClient({ baseUrl: live.url, clientCredentials: credentials });
  const result = await other.POST('/members/{uuid}/passes', {
    params: { path: { uuid: ada } },
    body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
    headers: { 'Idempotency-Key': `welcome-${ada}` },
  });
  expect(result.response.status).toBe(201);
  expect(wasReplayed(result)).toBe(false);
  expect(await couponPasses(ada)).toHaveLength(before.length + 1);
});

it("pages through a member's coupon passes, newest first, each once", async () => {
  const w = wire.length;
  const seen = [];
  for await (const pass of iterateMemberCoupons(client, { memberId: ada, brandId, perPage: 3 })) seen.push(pass);
  const codes = await couponPasses(ada);
  expect(codes).toHaveLength(4);
  expect(seen.map((p) => p.qr_code).sort()).toEqual(codes);
  for (const pass of seen)
    expect(pass).toMatchObject({
      status: 'active',
      coupon_title: expect.any(String),
      loyalty_code: expect.any(String),
    });
  const created = seen.map((p) => p.created_at);
  expect(created).toEqual([...created].sort().reverse());
  expect(sent(w).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(
    Array(2).fill(`GET /members/${ada}/coupons 200`),
  );
  // Another member's passes are not listed.
  const grace = unwrap(
    await client.POST('/members', { body: { brand_id: brandId, email: 'grace@example.org', unsubscribed: false } }),
  );
  const none = [];
  for await (const pass of iterateMemberCoupons(client, { memberId: grace.member_id, brandId })) none.push(pass);
  expect(none).toEqual([]);
});

const CHUNK_SIZES = [2000, 2000, 345];
const BAD_AT = 17; // in the second chunk
const signups: Signup[] = Array.from({ length: 4345 }, (_, i) => ({
  email: i === 2000 + BAD_AT ? 'not-an-email' : `bulk-${String(i).padStart(5, '0')}@example.org`,
  first_name: `Bulk ${i}`,
  unsubscribed: i % 7 === 0,
}));

const brandMembers = async () =>
  (
    await live.db
      .sql`SELECT m.email FROM members m JOIN brand_members b ON b.member_id = m.id WHERE b.brand_id = ${brandId} AND m.email LIKE 'bulk-%'`
  ).map((r) => r.email as string);

it('imports 4,345 sign-ups in chunks of 2,000 with a report per chunk; a bad e-mail fails only its own chunk', async () => {
  const w = wire.length;
  const progress: number[] = [];
  const reports = await importSignups(
    client,
    { brandId, users: signups },
    { idempotencyKeyPrefix: 'signups-run-1', onChunk: (r) => progress.push(r.index) },
  );
  expect(reports.map((r) => [r.index, r.size, r.ok, r.status, r.idempotencyKey])).toEqual([
    [0, 2000, true, 200, 'signups-run-1-0'],
    [1, 2000, false, 422, 'signups-run-1-1'],
    [2, 345, true, 200, 'signups-run-1-2'],
  ]);
  expect(progress.sort()).toEqual([0, 1, 2]);
  expect(reports.map((r) => r.items.length)).toEqual(CHUNK_SIZES);
  expect(reports[1]!.items[BAD_AT]!.email).toBe('not-an-email');

  const [ok0, failed, ok2] = reports;
  expect(Object.keys(ok0!.data!.data.new)).toEqual(signups.slice(0, 2000).map((u) => u.email));
  expect(ok0!.data!.data.found).toEqual({});
  expect(Object.keys(ok2!.data!.data.new)).toEqual(signups.slice(4000).map((u) => u.email));
  expect(failed!.error).toMatchObject({ status: 422, code: 'validation_failed' });
  expect(Object.keys(failed!.error!.fields!)).toEqual([`users.${BAD_AT}.email`]);

  // One call per chunk, each with its own key; the failed chunk changed nothing.
  const calls = sent(w);
  expect(calls.map((c) => c.key).sort()).toEqual(['signups-run-1-0', 'signups-run-1-1', 'signups-run-1-2']);
  const emails = await brandMembers();
  expect(emails).toHaveLength(2345);
  expect(new Set(emails)).toEqual(new Set([...signups.slice(0, 2000), ...signups.slice(4000)].map((u) => u.email)));
  const ids = Object.values(ok0!.data!.data.new).slice(0, 3);
  const [unsub] = await live.db
    .sql`SELECT count(*) FILTER (WHERE unsubscribed)::int AS n FROM brand_members WHERE member_id = ANY(${ids}::uuid[])`;
  expect(unsub!.n).toBe(1); // bulk-00000 only (every 7th)
});

it('re-running the corrected input with the same key prefix replays the finished chunks and runs the failed one', async () => {
  const fixed = signups.map((u, i) => (i === 2000 + BAD_AT ? { ...u, email: 'bulk-fixed@example.org' } : u));
  const reports = await importSignups(client, { brandId, users: fixed }, { idempotencyKeyPrefix: 'signups-run-1' });
  expect(reports.map((r) => [r.ok, r.status])).toEqual([
    [true, 200],
    [true, 200],
    [true, 200],
  ]);
  // Replayed: chunk 0 still reports its members as new (a second run would have found them).
  expect(Object.keys(reports[0]!.data!.data.new)).toHaveLength(2000);
  expect(Object.keys(reports[2]!.data!.data.new)).toHaveLength(345);
  expect(Object.keys(reports[1]!.data!.data.new)).toHaveLength(2000);
  expect(reports[1]!.data!.data.new['bulk-fixed@example.org']).toMatch(/^[0-9a-f-]{36}$/);

  const again = await importSignups(
    client,
    { brandId, users: fixed.slice(0, 2500) },
    { idempotencyKeyPrefix: 'signups-run-2', chunkSize: 1000, concurrency: 2 },
  );
  expect(again.map((r) => [r.size, r.ok])).toEqual([
    [1000, true],
    [1000, true],
    [500, true],
  ]);
  expect(again.every((r) => Object.keys(r.data!.data.new).length === 0)).toBe(true);
  expect(Object.keys(again[2]!.data!.data.found)).toHaveLength(500);
  expect(await brandMembers()).toHaveLength(4345);
});

it('pages through every member of the brand with the pagination helper: each seen exactly once', async () => {
  const expected = (await live.db.sql`SELECT member_id::text AS id FROM brand_members WHERE brand_id = ${brandId}`).map(
    (r) => r.id as string,
  );
  expect(expected).toHaveLength(4347); // the bulk members, Ada and Grace

  const w = wire.length;
  const seen: string[] = [];
  for await (const member of iterateMembers(client, { brandId, perPage: 500 })) seen.push(member.identifier);
  expect(seen).toHaveLength(expected.length);
  expect(new Set(seen).size).toBe(seen.length);
  expect(new Set(seen)).toEqual(new Set(expected));
  const pages = sent(w);
  expect(pages).toHaveLength(Math.ceil(expected.length / 500));
  expect(pages.every((p) => p.method === 'POST' && p.path === '/members/list' && p.status === 200)).toBe(true);

  // The order is the list's own (joined first, first): the same as the whole list in one call.
  const whole = unwrap(await client.POST('/members/list', { body: { brand_id: brandId } }));
  expect(whole.data.total).toBe(expected.length);
  expect(seen).toEqual(whole.data.members.map((m) => m.identifier));

  // Starting at a later page with a larger page size picks up where that page begins.
  const tail: string[] = [];
  for await (const member of iterateMembers(client, { brandId, perPage: 1000, page: 4 })) tail.push(member.identifier);
  expect(tail).toEqual(seen.slice(3000));
});
