import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, TEST_SECRET_KEY, type TestServer } from '#test-helpers/server.js';
import { createMember } from '../services/members/members.js';
import { issuePassToMember } from '../services/passes/passes-issue.js';
import { authenticationTokenOf, SANDBOX_PASS_TYPE_ID } from '../services/wallet/pass-identity.js';
import { noteExpiries } from '../services/wallet/wallet-registrations.js';

// Issue 28, part C: Apple's pass-update web service against a real PostgreSQL (server.inject; no
// worker here: queued push jobs are counted in graphile-worker's table, the live test sends them).

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true });
});
afterAll(() => t?.close());

type Pass = { passId: string; passCode: string; memberId: string };
let n = 0;
async function issue(org: 'acme' | 'globex', voucher: { storecard_id: string } | { coupon_id: string }): Promise<Pass> {
  const scope = { organizationIds: [`org-${org}`] };
  return t.db.sql.begin(async (tx) => {
    const { memberId } = await createMember(tx, scope, { brand_id: `brand-${org}`, email: `w${n++}@example.test` });
    const pass = await issuePassToMember(
      tx,
      scope,
      memberId,
      { brand_id: `brand-${org}`, ...voucher },
      'http://x.test',
    );
    return { passId: pass.passId, passCode: pass.passCode, memberId };
  });
}
const storecard = () => issue('acme', { storecard_id: 'card-points' });

const applePass = (passId: string) => ({
  authorization: `ApplePass ${authenticationTokenOf(TEST_SECRET_KEY, passId)}`,
});
const registration = (device: string, passId: string, type = SANDBOX_PASS_TYPE_ID) =>
  `/wallet/apple/v1/devices/${device}/registrations/${type}/${passId}`;
const parse = (payload: string) => (payload ? (JSON.parse(payload) as Json) : null);

async function register(
  device: string,
  passId: string,
  pushToken: string,
  headers: Record<string, string> = applePass(passId),
) {
  const res = await t.inject({ method: 'POST', url: registration(device, passId), headers, payload: { pushToken } });
  return { status: res.statusCode, body: parse(res.payload) };
}
async function updated(device: string, since?: string) {
  const query = since === undefined ? '' : `?passesUpdatedSince=${since}`;
  const res = await t.inject({
    method: 'GET',
    url: `/wallet/apple/v1/devices/${device}/registrations/${SANDBOX_PASS_TYPE_ID}${query}`,
  });
  return {
    status: res.statusCode,
    body: parse(res.payload) as { serialNumbers: string[]; lastUpdated: string } | null,
  };
}
/**
 * The tag at which the device is up to date: asked with it, the web service answers 204. A tag is the
 * start of the oldest transaction open on the database at the answer, so a transaction open then
 * (a request of this server, autovacuum) may have the same passes named once more (by design: named
 * twice, never missed; the device fetches them and gets 304). Asks with each next tag until 204; a
 * pass named on every ask (its version moving on by itself) fails here.
 */
async function upToDate(device: string, since?: string): Promise<string> {
  let tag = since ?? ((await updated(device)).body?.lastUpdated as string);
  const named: string[][] = [];
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const answer = await updated(device, tag);
    if (answer.status === 204) return tag;
    named.push(answer.body?.serialNumbers ?? []);
    tag = answer.body?.lastUpdated as string;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${device} was never up to date: named ${JSON.stringify(named.slice(-3))} on the last asks`);
}
const pushJobs = async (passId: string) =>
  (
    await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM graphile_worker._private_jobs j
      JOIN graphile_worker._private_tasks k ON k.id = j.task_id
      WHERE k.identifier = 'wallet_push' AND j.payload->>'pass_id' = ${passId}`
  )[0]?.n;
const earn = async (passCode: string, points: number, reference: string) => {
  const res = await t.inject({
    method: 'POST',
    url: '/passes/scan/storecard',
    headers: await t.auth('acme-admin'),
    payload: { pass_code: passCode, type: 'earn', points, transaction_reference: reference },
  });
  expect(res.statusCode).toBe(201);
};

describe('registering a device', () => {
  it('answers 201 for a new registration, 200 for the same device again, and lists the pass', async () => {
    const pass = await storecard();
    expect(await register('device-a1', pass.passId, 'push-a1')).toEqual({ status: 201, body: { success: true } });
    expect((await register('device-a1', pass.passId, 'push-a1-new')).status).toBe(200);
    const rows = await t.db.sql`SELECT push_token FROM wallet_registrations WHERE pass_id = ${pass.passId}`;
    expect(rows).toEqual([{ push_token: 'push-a1-new' }]);
    const list = await updated('device-a1');
    expect(list.status).toBe(200);
    expect(list.body?.serialNumbers).toEqual([pass.passId]);
    expect(list.body?.lastUpdated).toMatch(/^\d+$/);
  });

  it('refuses a wrong token, the token of another pass, an unknown pass and no header alike: 401', async () => {
    const pass = await storecard();
    const other = await storecard();
    const unknown = '0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d';
    for (const [passId, headers] of [
      [pass.passId, { authorization: 'ApplePass not-the-token-of-this-pass-at-all-0123456789' }],
      [pass.passId, applePass(other.passId)],
      [unknown, applePass(unknown)],
      [pass.passId, {}],
      [pass.passId, { authorization: `Bearer ${authenticationTokenOf(TEST_SECRET_KEY, pass.passId)}` }],
    ] as const) {
      const res = await register('device-b1', passId, 'push-b1', headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'unauthenticated' });
    }
    expect(await t.db.sql`SELECT 1 FROM wallet_registrations WHERE device_library_identifier = 'device-b1'`).toEqual(
      [],
    );
  });

  it('answers bad input with a 4xx naming the field, never a 5xx', async () => {
    const pass = await storecard();
    const bad = async (url: string, payload?: unknown, method = 'POST') => {
      const res = await t.inject({ method, url, headers: applePass(pass.passId), payload: payload as object });
      return { status: res.statusCode, body: parse(res.payload) };
    };
    const serial = await bad(registration('device-c1', 'not-a-uuid'), { pushToken: 'p' });
    expect(serial.status).toBe(422);
    expect(serial.body?.errors).toHaveProperty('serialNumber');
    const token = await bad(registration('device-c1', pass.passId), { pushToken: 'has spaces and / slashes' });
    expect(token.status).toBe(422);
    expect(token.body?.errors).toHaveProperty('pushToken');
    const missing = await bad(registration('device-c1', pass.passId), {});
    expect(missing.status).toBe(422);
    expect(missing.body?.errors).toHaveProperty('pushToken');
    const device = await bad(registration('dev ice', pass.passId), { pushToken: 'p' });
    expect(device.status).toBe(422);
    const type = await bad(registration('device-c1', pass.passId, 'pass.com.someone.else'), { pushToken: 'p' });
    expect(type.status).toBe(404);
    expect(JSON.stringify(type.body)).toContain('passTypeIdentifier');
    const tag = await bad(
      `/wallet/apple/v1/devices/device-c1/registrations/${SANDBOX_PASS_TYPE_ID}?passesUpdatedSince=yesterday`,
      undefined,
      'GET',
    );
    expect(tag.status).toBe(422);
    expect(tag.body?.errors).toHaveProperty('passesUpdatedSince');
    const log = await bad('/wallet/apple/v1/log', { logs: 'not a list' });
    expect(log.status).toBe(422);
    expect(log.body?.errors).toHaveProperty('logs');
  });

  it('unregisters with the pass token: 200, and the device no longer lists the pass (204)', async () => {
    const pass = await storecard();
    await register('device-d1', pass.passId, 'push-d1');
    const wrong = await t.inject({ method: 'DELETE', url: registration('device-d1', pass.passId), headers: {} });
    expect(wrong.statusCode).toBe(401);
    const res = await t.inject({
      method: 'DELETE',
      url: registration('device-d1', pass.passId),
      headers: applePass(pass.passId),
    });
    expect(res.statusCode).toBe(200);
    expect((await updated('device-d1')).status).toBe(204);
    // Again: still 200 (nothing to remove).
    const again = await t.inject({
      method: 'DELETE',
      url: registration('device-d1', pass.passId),
      headers: applePass(pass.passId),
    });
    expect(again.statusCode).toBe(200);
  });

  it('takes Wallet log messages: 200', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/wallet/apple/v1/log',
      payload: { logs: ['Web service error'] },
    });
    expect(res.statusCode).toBe(200);
    expect(parse(res.payload)).toEqual({ success: true });
  });
});

describe('pass.installed and pass.uninstalled', () => {
  it('records one event per new registration and per removal, with identifiers and a count only', async () => {
    const pass = await storecard();
    await register('device-e1', pass.passId, 'secret-push-e1');
    await register('device-e1', pass.passId, 'secret-push-e1-again'); // the same device: no event
    await register('device-e2', pass.passId, 'secret-push-e2');
    await t.inject({ method: 'DELETE', url: registration('device-e1', pass.passId), headers: applePass(pass.passId) });
    const events = await t.db.sql<{ type: string; organization_id: string; data: Json }[]>`
      SELECT type, organization_id, data FROM events
      WHERE type IN ('pass.installed', 'pass.uninstalled') AND data->>'pass_id' = ${pass.passId}
      ORDER BY txid, seq`;
    const data = {
      pass_id: pass.passId,
      kind: 'storecard',
      member_id: pass.memberId,
      brand_id: 'brand-acme',
      wallet: 'apple',
    };
    expect(events).toEqual([
      { type: 'pass.installed', organization_id: 'org-acme', data: { ...data, device_count: 1 } },
      { type: 'pass.installed', organization_id: 'org-acme', data: { ...data, device_count: 2 } },
      { type: 'pass.uninstalled', organization_id: 'org-acme', data: { ...data, device_count: 1 } },
    ]);
    const text = JSON.stringify(events);
    for (const secret of ['secret-push', 'device-e1', 'device-e2']) expect(text).not.toContain(secret);
  });

  it('lists both types in the event catalogue as subscribable', async () => {
    const res = await t.inject({ method: 'GET', url: '/webhook-event-types', headers: await t.auth('acme-admin') });
    const entries = (parse(res.payload) as { data: { type: string; subscribable: boolean }[] }).data;
    for (const type of ['pass.installed', 'pass.uninstalled'])
      expect(entries.find((e) => e.type === type)).toMatchObject({ subscribable: true });
  });
});

describe('pushes follow the changes of registered passes only', () => {
  it('queues no push job for a scan of a pass without devices, one for a registered pass', async () => {
    const lonely = await storecard();
    await earn(lonely.passCode, 5, 'lonely-1');
    expect(await pushJobs(lonely.passId)).toBe(0);
    const watched = await storecard();
    await register('device-f1', watched.passId, 'push-f1');
    await earn(watched.passCode, 5, 'watched-1');
    await earn(watched.passCode, 5, 'watched-2');
    // One job per pass however many changes (its job key).
    expect(await pushJobs(watched.passId)).toBe(1);
  });

  it('queues a push for a redeemed coupon pass with a device', async () => {
    const coupon = await issue('acme', { coupon_id: 'coupon-welcome' });
    await register('device-g1', coupon.passId, 'push-g1');
    const res = await t.inject({
      method: 'POST',
      url: '/passes/scan',
      headers: await t.auth('acme-admin'),
      payload: { pass_code: coupon.passCode },
    });
    expect(res.statusCode).toBe(200);
    expect(await pushJobs(coupon.passId)).toBe(1);
  });
});

describe('passesUpdatedSince', () => {
  it('answers 204 when nothing changed since the tag, and names the pass after an earn', async () => {
    const pass = await storecard();
    await register('device-h1', pass.passId, 'push-h1');
    const tag = await upToDate('device-h1');
    await earn(pass.passCode, 50, 'h1-earn');
    const after = await updated('device-h1', tag);
    expect(after.status).toBe(200);
    expect(after.body?.serialNumbers).toEqual([pass.passId]);
    expect(BigInt(after.body?.lastUpdated as string)).toBeGreaterThan(BigInt(tag));
    await upToDate('device-h1', after.body?.lastUpdated);
  });

  it("names a pass whose expiry a move of its organization's clock crossed, and pushes it; other organizations' stay", async () => {
    const coupon = await issue('acme', { coupon_id: 'coupon-welcome' }); // 30 days
    const theirs = await issue('globex', { coupon_id: 'coupon-globex' }); // 14 days
    await register('device-i1', coupon.passId, 'push-i1');
    await register('device-i2', theirs.passId, 'push-i2');
    const tag = await upToDate('device-i1');
    const theirTag = await upToDate('device-i2');
    const moved = await t.inject({
      method: 'POST',
      url: '/sandbox/clock',
      headers: await t.auth('acme-admin'),
      payload: { advance: '40d' },
    });
    expect(moved.statusCode).toBe(200);
    const after = await updated('device-i1', tag);
    expect(after.status).toBe(200);
    expect(after.body?.serialNumbers).toEqual([coupon.passId]);
    expect(await pushJobs(coupon.passId)).toBe(1);
    // Noted once: the next tags stop naming it.
    await upToDate('device-i1', after.body?.lastUpdated);
    // globex's clock did not move: its pass is not expired, not named, not pushed.
    expect((await updated('device-i2', theirTag)).status).toBe(204);
    expect(await pushJobs(theirs.passId)).toBe(0);
  });
});

describe('expiry by the passing of time', () => {
  it('names a pass whose expiry passed before the periodic check notes it, then pushes it once', async () => {
    const coupon = await issue('globex', { coupon_id: 'coupon-globex' });
    await register('device-j1', coupon.passId, 'push-j1');
    const tag = (await updated('device-j1')).body?.lastUpdated as string;
    // Its expiration date passed (as at midnight of its organization's clock); nothing else changed.
    await t.db.sql`UPDATE passes SET expiration_date = expiration_date - 30 WHERE id = ${coupon.passId}`;
    await t.db.sql`UPDATE wallet_registrations SET expiry_noted_at = NULL WHERE pass_id = ${coupon.passId}`;
    expect((await updated('device-j1', tag)).body?.serialNumbers).toEqual([coupon.passId]);
    expect(await pushJobs(coupon.passId)).toBe(0);
    expect(await noteExpiries(t.db.sql)).toBeGreaterThanOrEqual(1);
    expect(await pushJobs(coupon.passId)).toBe(1);
    const noted = (await updated('device-j1', tag)).body?.lastUpdated as string;
    await upToDate('device-j1', noted);
    // Noted once: the next check finds nothing more of it.
    await noteExpiries(t.db.sql);
    expect(await pushJobs(coupon.passId)).toBe(1);
  });
});

describe('outside sandbox mode', () => {
  it('has no push sink (404), and the web service answers as in the sandbox', async () => {
    const real = await createTestServer({ sandbox: false });
    try {
      const sink = await real.inject({
        method: 'GET',
        url: '/sandbox/wallet/pushes',
        headers: { authorization: 'PushToken x' },
      });
      expect(sink.statusCode).toBe(404);
      const list = await real.inject({
        method: 'GET',
        url: `/wallet/apple/v1/devices/device-k1/registrations/${SANDBOX_PASS_TYPE_ID}`,
      });
      expect(list.statusCode).toBe(204);
    } finally {
      await real.close();
    }
  });
});

describe('rate limits', () => {
  it('counts the web service and the push sink per address, like other routes without a token', async () => {
    const limited = await createTestServer({ sandbox: true, rateLimitIp: 3 });
    try {
      const urls = [
        `/wallet/apple/v1/devices/device-rl/registrations/${SANDBOX_PASS_TYPE_ID}`,
        '/sandbox/wallet/pushes',
        `/wallet/apple/v1/devices/device-rl/registrations/${SANDBOX_PASS_TYPE_ID}`,
      ];
      for (const url of urls) {
        const res = await limited.inject({ method: 'GET', url, headers: { authorization: 'PushToken rl' } });
        expect(res.statusCode).toBeLessThan(400);
        expect(res.headers['ratelimit-policy']).toMatch(/^"ip";q=3;/);
      }
      const over = await limited.inject({
        method: 'POST',
        url: '/wallet/apple/v1/log',
        headers: { authorization: 'ApplePass anything-at-all' },
        payload: { logs: [] },
      });
      expect(over.statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
