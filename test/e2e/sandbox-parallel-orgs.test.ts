// End to end (issue 25): parallel CI on one sandbox. Eight throwaway organizations, created on one
// live sandbox server (with its worker) through the SDK's helper as the fixture client sandbox-ci,
// run the same scenario at the same time, each as its own admin client: a member, its 14-day
// coupon pass, a webhook subscription whose delivery reaches a local receiver, ITS clock 15 days
// ahead (its own pass becomes `expired`), then a reset of ITS sandbox. Barriers between the
// steps make the interleaving the worst case: every clock moves before anyone checks its own,
// half of them reset while the other half still check theirs. Each sees its own clock (15 days,
// never the sum of the others'), its own data only, and the fixture organization acme nothing.
import { createSandboxOrganization, type SandboxOrganization } from '@loyalty/sdk/testing/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveServer } from '#test-helpers/live-server.js';
import { apiOf, startSandboxServer } from '#test-helpers/sandbox-server.js';
import type { Json } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { startReceiver, type Receiver } from '#test-helpers/webhook-receiver.js';

const ORGS = 8;
const DAY = 86_400;

let live: LiveServer;
let receiver: Receiver;
let orgs: SandboxOrganization[] = [];
/** Deliveries the receiver got, by the path (one per organization) they were sent to. */
const received = new Map<string, { organization_id: string; type: string }[]>();

beforeAll(async () => {
  live = await startSandboxServer();
  receiver = await startReceiver((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const list = received.get(req.url ?? '') ?? [];
      list.push(JSON.parse(body));
      received.set(req.url ?? '', list);
      res.writeHead(204).end();
    });
  });
});
afterAll(async () => {
  await Promise.all(orgs.map((org) => org.delete()));
  await receiver?.close();
  await live?.close();
});

/**
 * Barriers for `n` parties: each `wait()` resolves once all `n` have called it. `broken(error)`
 * (a party failed and will never arrive) rejects every wait, so the others stop instead of hanging.
 */
type Barrier = { arrived: number; open: () => void; fail: (error: unknown) => void; opened: Promise<void> };

function barriers(n: number) {
  const all: Barrier[] = [];
  let brokenBy: unknown;
  const make = () => {
    const b: Barrier = { arrived: 0, open: () => {}, fail: () => {}, opened: Promise.resolve() };
    b.opened = new Promise<void>((resolve, reject) => {
      b.open = resolve;
      b.fail = reject;
    });
    b.opened.catch(() => undefined);
    all.push(b);
    return async () => {
      if (brokenBy) throw new Error('barrier broken: another organization failed');
      b.arrived += 1;
      if (b.arrived === n) b.open();
      await b.opened;
    };
  };
  const broken = (error: unknown) => {
    brokenBy = error;
    for (const b of all) b.fail(new Error('barrier broken: another organization failed'));
  };
  return { make, broken };
}

/** `fetch` as one organization's admin client: its own token (a fresh one after `renew`). */
function adminOf(org: SandboxOrganization) {
  const { client_id, client_secret } = org.clients.admin;
  let token: string | undefined;
  const renew = async () => {
    const res = await fetch(`${live.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id, client_secret }),
    });
    expect(res.status, `token for ${client_id}`).toBe(200);
    token = ((await res.json()) as { access_token: string }).access_token;
    return token;
  };
  const call = async (method: string, url: string, body?: unknown, bearer?: string) => {
    const res = await fetch(`${live.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer ?? token ?? (await renew())}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  };
  return { call, renew, token: () => token };
}

describe('eight throwaway organizations on one sandbox server', () => {
  it('run the same scenario concurrently; each sees only its own data and its own clock', async () => {
    // acme (a fixture organization, not in the scenario): a member and its clock, checked at the end
    const acme = apiOf(live);
    const acmeMember = await acme.call('POST', '/members', { brand_id: 'brand-acme', email: 'bystander@example.org' });
    expect(acmeMember.status).toBe(201);

    orgs = await Promise.all(
      Array.from({ length: ORGS }, (_, i) =>
        createSandboxOrganization({
          baseUrl: live.url,
          clientCredentials: { clientId: 'sandbox-ci', clientSecret: 'sandbox-ci-secret' },
          ttl: '1h',
          name: `parallel ${i}`,
        }),
      ),
    );
    expect(new Set(orgs.map((org) => org.organization.id)).size).toBe(ORGS);
    expect(new Set(orgs.map((org) => org.brand_id)).size).toBe(ORGS);

    const phases = barriers(ORGS);
    const subscribed = phases.make();
    const advanced = phases.make();
    const firstHalfReset = phases.make();
    const allReset = phases.make();
    const members: string[] = new Array(ORGS);

    const scenario = async (org: SandboxOrganization, i: number) => {
      const id = org.organization.id;
      const brand = org.brand_id;
      const admin = adminOf(org);
      const step = (what: string) => `org ${i} (${id}): ${what}`;

      // a member and its 14-day coupon pass
      const member = await admin.call('POST', '/members', { brand_id: brand, email: `ci-${i}@example.org` });
      expect(member.status, step(JSON.stringify(member.body))).toBe(201);
      const memberId: string = member.body.member_id;
      members[i] = memberId;
      const pass = await admin.call('POST', `/members/${memberId}/passes`, {
        brand_id: brand,
        coupon_id: org.coupon_id,
      });
      expect(pass.status, step(JSON.stringify(pass.body))).toBe(201);
      const passStatus = async () => {
        const coupons = await admin.call('GET', `/members/${memberId}/coupons?brand_id=${brand}`);
        expect(coupons.status, step(JSON.stringify(coupons.body))).toBe(200);
        return coupons.body.data.map((p: { status: string }) => p.status);
      };
      expect(await passStatus(), step('pass')).toEqual(['active']);

      // a webhook subscription and a delivery to the local receiver
      const path = `/hook/${id}`;
      const sub = await admin.call('POST', '/webhook-subscriptions', {
        url: `${receiver.base}${path}`,
        events: ['member.created'],
      });
      expect(sub.status, step(JSON.stringify(sub.body))).toBe(201);
      const second = await admin.call('POST', '/members', { brand_id: brand, email: `ci-${i}-b@example.org` });
      expect(second.status).toBe(201);
      const deliveries = await until(() => received.get(path), 30_000, 50);
      expect(
        deliveries.map((d) => [d.type, d.organization_id]),
        step('deliveries'),
      ).toEqual([['member.created', id]]);
      await subscribed();

      // every organization moves its own clock 15 days, at the same time
      const moved = await admin.call('POST', '/sandbox/clock', { advance: '15d' });
      expect(moved.status, step(JSON.stringify(moved.body))).toBe(200);
      expect(moved.body.data).toMatchObject({ organization_id: id, offset_seconds: 15 * DAY });
      await advanced();
      // Its tokens follow its clock (15 days: expired); a new one works.
      expect((await admin.call('GET', `/tags?brand_id=${brand}`)).status, step('old token')).toBe(401);
      await admin.renew();
      const clock = await admin.call('GET', '/sandbox/clock');
      expect(clock.body.data, step('clock after all moved')).toMatchObject({
        organization_id: id,
        offset_seconds: 15 * DAY,
      });
      expect(await passStatus(), step('pass 15 days later')).toEqual(['expired']);
      // another organization's member and brand stay invisible
      const other = (i + 1) % ORGS;
      const foreign = await admin.call('GET', `/members/${members[other]}?brand_id=${orgs[other]?.brand_id}`);
      expect([403, 404], step(`foreign member: ${foreign.status}`)).toContain(foreign.status);
      const foreignInOwnBrand = await admin.call('GET', `/members/${members[other]}?brand_id=${brand}`);
      expect(foreignInOwnBrand.status, step('foreign member in own brand')).toBe(404);
      const foreignSubs = await admin.call('GET', '/webhook-subscriptions');
      expect(
        foreignSubs.body.data.map((s: { organization_id: string }) => s.organization_id),
        step('subscriptions'),
      ).toEqual([id]);

      // half of them reset while the other half still see their own data and clock
      const reset = async () => {
        const done = await admin.call('POST', '/sandbox/reset');
        expect(done.status, step(JSON.stringify(done.body))).toBe(200);
        expect(done.body.data).toMatchObject({ scope: 'organizations', organization_ids: [id] });
      };
      if (i % 2 === 0) await reset();
      await firstHalfReset();
      if (i % 2 === 1) {
        expect((await admin.call('GET', `/members/${memberId}?brand_id=${brand}`)).status, step('kept')).toBe(200);
        expect((await admin.call('GET', '/sandbox/clock')).body.data.offset_seconds, step('kept clock')).toBe(15 * DAY);
        await reset();
      }
      await allReset();

      // after its reset: tokens revoked, data gone, clock at real time; the organization and its clients stay
      const before = admin.token();
      expect((await admin.call('GET', `/tags?brand_id=${brand}`, undefined, before)).status, step('revoked')).toBe(401);
      await admin.renew();
      expect((await admin.call('GET', `/members/${memberId}?brand_id=${brand}`)).status, step('member gone')).toBe(404);
      expect((await admin.call('GET', '/sandbox/clock')).body.data.offset_seconds, step('clock back')).toBe(0);
      expect((await admin.call('GET', '/webhook-subscriptions')).body.data, step('subscriptions gone')).toEqual([]);
      const again = await admin.call('POST', `/members`, { brand_id: brand, email: `ci-${i}@example.org` });
      expect(again.status, step('a new member after the reset')).toBe(201);
    };

    const results = await Promise.allSettled(
      orgs.map((org, i) =>
        scenario(org, i).catch((error: unknown) => {
          phases.broken(error);
          throw error;
        }),
      ),
    );
    const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`org ${i}: ${r.reason}`] : []));
    expect(failures).toEqual([]);

    // acme saw none of it: its member is there and its clock never moved
    acme.forget();
    expect((await acme.call('GET', `/members/${acmeMember.body.member_id}?brand_id=brand-acme`)).status).toBe(200);
    expect((await acme.call('GET', '/sandbox/clock')).body.data).toMatchObject({
      organization_id: 'org-acme',
      offset_seconds: 0,
    });
    expect(received.size).toBe(ORGS);
  });
});
