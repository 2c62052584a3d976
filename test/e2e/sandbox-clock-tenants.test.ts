// End to end (issue 25): every organization has its own sandbox clock. Against a live sandbox
// server with its worker and a retry schedule spanning days, acme resets its sandbox and advances
// its clock 40 days while globex runs a scenario (a token, a 14-day coupon, a failing receiver's pending retries, a
// rotation overlap): globex sees no change at all. Before, one clock moved every tenant: acme's
// advance answered 401 to globex's token, expired its coupon, drove its retries to `failed` and
// ended its rotation overlap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveServer } from '#test-helpers/live-server.js';
import { apiOf, startSandboxServer } from '#test-helpers/sandbox-server.js';
import { until } from '#test-helpers/until.js';
import { startReceiver, type Receiver } from '#test-helpers/webhook-receiver.js';

let live: LiveServer;
let api: ReturnType<typeof apiOf>;
let receiver: Receiver;
/** What globex's receiver saw: attempts to the failing path, signature headers of the other. */
const failing: { messageId: string; attempt: number }[] = [];
const signatures: string[] = [];
beforeAll(async () => {
  // The default schedule's shape, its first retry 5 minutes away instead of 30 s: a slow machine
  // must not see a retry fall due in real time while the test runs.
  live = await startSandboxServer({ webhookRetryDelays: [300, 600, 600, 3600, 10800, 21600, 86400] });
  api = apiOf(live);
  receiver = await startReceiver((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/fail') {
        failing.push({
          messageId: String(req.headers['loyalty-message-id']),
          attempt: Number(req.headers['loyalty-attempt']),
        });
        res.writeHead(500).end();
      } else {
        signatures.push(String(req.headers['webhook-signature']));
        res.writeHead(200).end();
      }
    });
  });
});
afterAll(async () => {
  await receiver?.close();
  await live?.close();
});

const GLOBEX = 'globex-admin';
const globex = (method: string, url: string, body?: unknown) => api.call(method, url, body, {}, GLOBEX);
type Delivery = { id: string; status: string; attempts: unknown[]; next_attempt_at: string };
const deliveriesOf = async (subscriptionId: string): Promise<Delivery[]> =>
  (await globex('GET', `/webhook-subscriptions/${subscriptionId}/deliveries`)).body.data;

describe("acme's reset and its clock 40 days ahead", () => {
  it('change nothing for globex: its token, its 14-day coupon, its pending retries and its rotation overlap', async () => {
    // globex's scenario
    const token = await api.token(GLOBEX);
    const member = await globex('POST', '/members', { brand_id: 'brand-globex', email: 'tenant@example.org' });
    expect(member.status, JSON.stringify(member.body)).toBe(201);
    const pass = await globex('POST', `/members/${member.body.member_id}/passes`, {
      brand_id: 'brand-globex',
      coupon_id: 'coupon-globex',
    });
    expect(pass.status).toBe(201);
    const passStatus = async () =>
      (await globex('GET', `/members/${member.body.member_id}/coupons?brand_id=brand-globex`)).body.data.find(
        (p: { qr_code: string }) => p.qr_code === pass.body.pass_code,
      ).status;
    expect(await passStatus()).toBe('active');

    const failingSub = await globex('POST', '/webhook-subscriptions', {
      url: `${receiver.base}/fail`,
      events: ['member.created'],
    });
    expect(failingSub.status).toBe(201);
    for (const n of [1, 2, 3])
      await globex('POST', '/members', { brand_id: 'brand-globex', email: `r${n}@example.org` });
    const pending = await until(async () => {
      const list = await deliveriesOf(failingSub.body.data.id);
      return list.length === 3 && list.every((d) => d.attempts.length === 1 && d.status === 'pending')
        ? list
        : undefined;
    }, 15_000);
    const dueBefore = new Map(pending.map((d) => [d.id, d.next_attempt_at]));

    const rotated = await globex('POST', '/webhook-subscriptions', {
      url: `${receiver.base}/ok`,
      events: ['member.created'],
    });
    expect((await globex('POST', `/webhook-subscriptions/${rotated.body.data.id}/rotate-secret`)).status).toBe(200);
    expect((await globex('POST', `/webhook-subscriptions/${rotated.body.data.id}/test`)).status).toBe(200);
    expect(signatures.at(-1)?.match(/v1,/g)).toHaveLength(2);

    // acme resets its sandbox while globex's scenario is under way: acme's data goes back to the
    // fixtures, its tokens are revoked; globex's members, token and subscriptions stay
    const doomed = await api.call('POST', '/members', { brand_id: 'brand-acme', email: 'doomed@example.org' });
    expect(doomed.status).toBe(201);
    const reset = await api.call('POST', '/sandbox/reset', {});
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(reset.body.data.organization_ids).toEqual(['org-acme']);
    api.forget();
    expect((await api.call('GET', `/members/${doomed.body.member_id}?brand_id=brand-acme`)).status).toBe(404);
    expect((await globex('GET', `/members/${member.body.member_id}?brand_id=brand-globex`)).status).toBe(200);
    expect((await globex('GET', '/webhook-subscriptions')).body.data).toHaveLength(2);

    // acme's 30-day coupon, to see acme's clock move
    const acmeMember = await api.call('POST', '/members', { brand_id: 'brand-acme', email: 'mover@example.org' });
    const acmePass = await api.call('POST', `/members/${acmeMember.body.member_id}/passes`, {
      brand_id: 'brand-acme',
      coupon_id: 'coupon-welcome',
    });
    expect(acmePass.status).toBe(201);

    // acme moves its clock 40 days, in steps (each wakes acme's delivery lanes)
    for (const by of ['2d', '2d', '2d', '2d', '2d', '30d']) {
      const moved = await api.call('POST', '/sandbox/clock', { advance: by });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      expect(moved.body.data.organization_id).toBe('org-acme');
      api.forget();
    }
    expect((await api.call('GET', '/sandbox/clock')).body.data.offset_seconds).toBe(40 * 86_400);
    const acmeCoupon = await api.call('GET', `/members/${acmeMember.body.member_id}/coupons?brand_id=brand-acme`);
    expect(acmeCoupon.body.data[0].status).toBe('expired');

    // globex: the token issued before works, the clock has not moved, the coupon is active
    const tags = await fetch(`${live.url}/tags?brand_id=brand-globex`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(tags.status).toBe(200);
    expect((await globex('GET', '/sandbox/clock')).body.data).toMatchObject({
      organization_id: 'org-globex',
      offset_seconds: 0,
    });
    expect(await passStatus()).toBe('active');
    // the retries keep their schedule: nothing sent early, nothing exhausted
    await new Promise((r) => setTimeout(r, 3000)); // woken lanes would have sent by now
    const after = await deliveriesOf(failingSub.body.data.id);
    for (const d of after) {
      expect(d.status).toBe('pending');
      expect(d.next_attempt_at).toBe(dueBefore.get(d.id));
    }
    expect(failing.map((f) => f.attempt).sort()).toEqual([1, 1, 1]);
    // the rotation overlap still signs with both secrets
    expect((await globex('POST', `/webhook-subscriptions/${rotated.body.data.id}/test`)).status).toBe(200);
    expect(signatures.at(-1)?.match(/v1,/g)).toHaveLength(2);
  });
});
