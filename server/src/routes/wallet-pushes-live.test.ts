import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchToken, type LiveServer } from '#test-helpers/live-server.js';
import { startSandboxServer } from '#test-helpers/sandbox-server.js';
import { TEST_SECRET_KEY } from '#test-helpers/server.js';
import { createMember } from '../services/members/members.js';
import { issuePassToMember } from '../services/passes/passes-issue.js';
import { authenticationTokenOf, SANDBOX_PASS_TYPE_ID } from '../services/wallet/pass-identity.js';

// Issue 28, part C, over real HTTP with the real worker: a registered device's push arrives in the
// sandbox push sink within a second of the change, and never at another organization's device.

let live: LiveServer;
beforeAll(async () => {
  live = await startSandboxServer();
});
afterAll(() => live?.close());

let n = 0;
async function issue(org: 'acme' | 'globex', voucher: { storecard_id: string } | { coupon_id: string }) {
  const scope = { organizationIds: [`org-${org}`] };
  return live.db.sql.begin(async (tx) => {
    const { memberId } = await createMember(tx, scope, { brand_id: `brand-${org}`, email: `live${n++}@example.test` });
    return issuePassToMember(tx, scope, memberId, { brand_id: `brand-${org}`, ...voucher }, live.url);
  });
}

async function register(device: string, passId: string, pushToken: string) {
  const res = await fetch(
    `${live.url}/wallet/apple/v1/devices/${device}/registrations/${SANDBOX_PASS_TYPE_ID}/${passId}`,
    {
      method: 'POST',
      headers: {
        authorization: `ApplePass ${authenticationTokenOf(TEST_SECRET_KEY, passId)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ pushToken }),
    },
  );
  expect(res.status).toBe(201);
}

type PushList = { data: { id: string; topic: string; sent_at: string }[]; next_after: string };
async function pushes(pushToken: string, query = '') {
  const res = await fetch(`${live.url}/sandbox/wallet/pushes${query}`, {
    headers: { authorization: `PushToken ${pushToken}` },
  });
  return { status: res.status, body: (await res.json()) as PushList };
}

async function api(clientId: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${live.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${await fetchToken(live.url, clientId)}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the sandbox push sink', () => {
  it('wakes a waiting poll within 1 s of an earn on a registered storecard; no other device gets it', async () => {
    const acme = await issue('acme', { storecard_id: 'card-points' });
    const globex = await issue('globex', { coupon_id: 'coupon-globex' });
    await register('live-device-acme', acme.passId, 'live-push-acme');
    await register('live-device-globex', globex.passId, 'live-push-globex');
    const start = await pushes('live-push-acme');
    expect(start).toEqual({ status: 200, body: { data: [], next_after: '0' } });

    const waiting = pushes('live-push-acme', `?after=${start.body.next_after}&wait=10`).then((r) => ({
      ...r,
      at: performance.now(),
    }));
    await new Promise((r) => setTimeout(r, 100)); // the poll is waiting
    const earned = await api('acme-admin', 'POST', '/passes/scan/storecard', {
      pass_code: acme.passCode,
      type: 'earn',
      points: 50,
      transaction_reference: 'live-earn-1',
    });
    const scannedAt = performance.now();
    expect(earned.status).toBe(201);
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(woken.body.data).toHaveLength(1);
    expect(woken.body.data[0]).toMatchObject({ topic: SANDBOX_PASS_TYPE_ID });
    expect(woken.body.next_after).toBe(woken.body.data[0]?.id);
    expect(woken.at - scannedAt).toBeLessThan(1000);

    // globex's device: nothing of acme's change.
    expect((await pushes('live-push-globex')).body.data).toEqual([]);
    // The device then learns which pass changed, as Wallet does.
    const list = await fetch(
      `${live.url}/wallet/apple/v1/devices/live-device-acme/registrations/${SANDBOX_PASS_TYPE_ID}`,
    );
    expect(((await list.json()) as { serialNumbers: string[] }).serialNumbers).toEqual([acme.passId]);
  });

  it("pushes globex's device when its coupon is redeemed, and acme's device sees nothing of it", async () => {
    const acme = await issue('acme', { storecard_id: 'card-points' });
    const globex = await issue('globex', { coupon_id: 'coupon-globex' });
    await register('live-device-acme-2', acme.passId, 'live-push-acme-2');
    await register('live-device-globex-2', globex.passId, 'live-push-globex-2');
    const waiting = pushes('live-push-globex-2', '?wait=10');
    await new Promise((r) => setTimeout(r, 100));
    expect((await api('globex-admin', 'POST', '/passes/scan', { pass_code: globex.passCode })).status).toBe(200);
    expect((await waiting).body.data).toHaveLength(1);
    expect((await pushes('live-push-acme-2')).body.data).toEqual([]);
  });

  it('answers at once with nothing new when wait is 0, and asks for the push token', async () => {
    expect(await pushes('live-push-nobody', '?after=0')).toEqual({ status: 200, body: { data: [], next_after: '0' } });
    const missing = await fetch(`${live.url}/sandbox/wallet/pushes`);
    expect(missing.status).toBe(401);
    const bad = await pushes('live-push-nobody', '?after=minus-one');
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('after');
  });
});
