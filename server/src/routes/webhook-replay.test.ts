import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { sha256 } from '../lib/hash.js';
import { fanOutEvents } from '../services/webhooks/deliveries.js';
import { type NewEvent, recordEvents } from '../services/webhooks/events.js';

/**
 * Issue 29: subscriptions filtered by brand and points, replay-missing and resend, on real
 * PostgreSQL through the routes. No worker runs: deliveries stay as the statements created them.
 */

let t: TestServer;
const OUTLET = 'brand-acme-outlet';
beforeAll(async () => {
  t = await createTestServer();
  await t.db.sql`INSERT INTO brands (id, organization_id, name) VALUES (${OUTLET}, 'org-acme', 'Acme Outlet')`;
  await t.db.sql`
    INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
    VALUES ('multi', ${sha256('multi-secret')}, '{org-acme,org-globex}', '{webhooks.get,webhooks.store}')`;
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.db.sql`DELETE FROM webhook_subscriptions`;
  await t.db.sql`DELETE FROM events`; // each test's window holds its own events only
});

type Sub = { id: string; filter: Record<string, unknown> | null; active: boolean };

async function call(method: string, url: string, payload?: object, client = 'acme-admin') {
  return t.inject({ method, url, headers: await t.auth(client), ...(payload ? { payload } : {}) });
}
async function subscribe(
  events: string[],
  filter?: object | null,
  client = 'acme-admin',
  url = 'https://hooks.acme.test/x',
): Promise<Sub> {
  const res = await call('POST', '/webhook-subscriptions', { url, events, filter }, client);
  expect(res.statusCode, res.payload).toBe(201);
  return (res.result as { data: Sub }).data;
}

const points = (brand: string, type: string, amount: number, org = 'org-acme'): NewEvent => ({
  organizationId: org,
  type: 'points.changed',
  data: {
    member_id: crypto.randomUUID(),
    brand_id: brand,
    storecard_id: 'card-points',
    pass_id: crypto.randomUUID(),
    type,
    points: amount,
    balance: 100,
    reference: crypto.randomUUID(),
  },
});
const coupon = (brand: string | null, org = 'org-acme'): NewEvent => ({
  organizationId: org,
  type: 'coupon.issued',
  data: {
    coupon_id: 'coupon-welcome',
    pass_id: crypto.randomUUID(),
    member_id: crypto.randomUUID(),
    brand_id: brand,
    expires_at: null,
  },
});
const record = (events: NewEvent[]) => t.db.sql.begin((tx) => recordEvents(tx, events));
const deliveredEvents = async (subscriptionId: string) =>
  (
    await t.db.sql<
      { event_id: string }[]
    >`SELECT event_id FROM webhook_deliveries WHERE subscription_id = ${subscriptionId}`
  ).map((r) => r.event_id);

describe('subscription filter', () => {
  it('is stored, returned, replaced by PATCH and cleared by null', async () => {
    const sub = await subscribe(['points.changed'], {
      brand_ids: [OUTLET, OUTLET],
      points_min: 10,
      points_types: ['earn'],
    });
    expect(sub.filter).toEqual({ brand_ids: [OUTLET], points_min: 10, points_types: ['earn'] });
    const got = await call('GET', `/webhook-subscriptions/${sub.id}`);
    expect((got.result as { data: Sub }).data.filter).toEqual(sub.filter);

    const patched = await call('PATCH', `/webhook-subscriptions/${sub.id}`, {
      filter: { points_types: ['spend', 'reverse'] },
    });
    expect(patched.statusCode).toBe(200);
    expect((patched.result as { data: Sub }).data.filter).toEqual({ points_types: ['spend', 'reverse'] });
    const untouched = await call('PATCH', `/webhook-subscriptions/${sub.id}`, { description: 'note' });
    expect((untouched.result as { data: Sub }).data.filter).toEqual({ points_types: ['spend', 'reverse'] });
    const cleared = await call('PATCH', `/webhook-subscriptions/${sub.id}`, { filter: null });
    expect((cleared.result as { data: Sub }).data.filter).toBeNull();
    expect((await subscribe(['coupon.issued'])).filter).toBeNull();
  });

  it.each([
    [{ brand_ids: ['brand-globex'] }, 'filter.brand_ids'], // another organization's brand
    [{ brand_ids: ['no-such-brand'] }, 'filter.brand_ids'],
    [{ brand_ids: [] }, 'filter.brand_ids'],
    [{ points_types: ['gift'] }, 'filter.points_types.0'],
    [{ points_min: -1 }, 'filter.points_min'],
    [{ points_min: 'ten' }, 'filter.points_min'],
    [{ brand: 'x' }, 'filter.brand'],
  ])('refuses %j with a 422 naming %s, on create and on PATCH', async (filter, field) => {
    const created = await call('POST', '/webhook-subscriptions', {
      url: 'https://hooks.acme.test/x',
      events: ['points.changed'],
      filter,
    });
    expect(created.statusCode, created.payload).toBe(422);
    expect(JSON.stringify((created.result as { errors?: object }).errors ?? created.result)).toContain(field);
    const sub = await subscribe(['points.changed']);
    const patched = await call('PATCH', `/webhook-subscriptions/${sub.id}`, { filter });
    expect(patched.statusCode).toBe(422);
    expect(JSON.stringify((patched.result as { errors?: object }).errors ?? patched.result)).toContain(field);
  });

  it('fan-out creates deliveries only for the events that pass the filter, across two brands', async () => {
    const outlet = await subscribe(['points.changed', 'coupon.issued', 'webhook_subscription.disabled'], {
      brand_ids: [OUTLET],
      points_min: 10,
      points_types: ['earn', 'reverse'],
    });
    const everything = await subscribe(['points.changed', 'coupon.issued', 'webhook_subscription.disabled']);
    const ids = await record([
      points(OUTLET, 'earn', 50), // 0 passes
      points('brand-acme', 'earn', 50), // 1 other brand
      points(OUTLET, 'earn', 9), // 2 under points_min
      points(OUTLET, 'spend', 50), // 3 a type not asked for
      points(OUTLET, 'reverse', 10), // 4 passes (the minimum is inclusive)
      coupon(OUTLET), // 5 passes (points_* look at points.changed only)
      coupon('brand-acme'), // 6 other brand
      coupon(null), // 7 no brand: does not match a brand filter
      {
        organizationId: 'org-acme',
        type: 'webhook_subscription.disabled',
        data: { subscription_id: everything.id, reason: 'manual' },
      }, // 8 about no brand: passes (and is about `everything`, which never receives it: no loops)
    ]);
    expect(await fanOutEvents(t.db.sql, ids)).toBe(4 + ids.length - 1);
    expect((await deliveredEvents(outlet.id)).sort()).toEqual([ids[0], ids[4], ids[5], ids[8]].sort());
    expect((await deliveredEvents(everything.id)).sort()).toEqual(ids.slice(0, 8).sort());
  });
});

describe('POST /webhook-subscriptions/{id}/test with a sample', () => {
  type Sample = { type: string; brand_id?: string | null; points?: number; points_type?: string };
  type Verdict = { matches: boolean; reason: string };
  // Nothing listens on port 9 (discard): the ping fails at once, and the test still answers 200.
  const testOf = async (id: string, body?: object) => {
    const res = await call('POST', `/webhook-subscriptions/${id}/test`, body);
    return { status: res.statusCode, payload: res.payload, data: (res.result as { data?: { sample?: Verdict } }).data };
  };
  const eventOf = (sample: Sample): NewEvent =>
    sample.type === 'points.changed'
      ? points(sample.brand_id ?? OUTLET, sample.points_type ?? 'earn', sample.points ?? 50)
      : sample.type === 'coupon.issued'
        ? coupon(sample.brand_id ?? null)
        : {
            organizationId: 'org-acme',
            type: 'member.created',
            data: { member_id: crypto.randomUUID(), brand_id: sample.brand_id ?? OUTLET },
          };

  it("answers by the fan-out's rule: a sample matches exactly when the same event gets a delivery", async () => {
    const sub = await subscribe(
      ['points.changed', 'coupon.issued'],
      { brand_ids: [OUTLET], points_min: 10, points_types: ['earn'] },
      'acme-admin',
      'http://127.0.0.1:9/x',
    );
    const cases: [Sample, string][] = [
      [{ type: 'points.changed', brand_id: OUTLET, points: 10, points_type: 'earn' }, 'passes the filter'],
      [
        { type: 'points.changed', brand_id: 'brand-acme', points: 50, points_type: 'earn' },
        `brand brand-acme is not in the filter (${OUTLET})`,
      ],
      [
        { type: 'points.changed', brand_id: OUTLET, points: 9, points_type: 'earn' },
        "9 points is under the filter's minimum of 10",
      ],
      [
        { type: 'points.changed', brand_id: OUTLET, points: 50, points_type: 'spend' },
        'type spend is not in the filter (earn)',
      ],
      [{ type: 'coupon.issued', brand_id: OUTLET }, 'passes the filter'],
      [{ type: 'coupon.issued', brand_id: null }, `brand none is not in the filter (${OUTLET})`],
      [
        { type: 'member.created', brand_id: OUTLET },
        'member.created is not one of the subscribed events (points.changed, coupon.issued)',
      ],
    ];
    for (const [sample, reason] of cases) {
      const { status, payload, data } = await testOf(sub.id, { sample });
      expect(status, payload).toBe(200);
      expect(data?.sample?.reason, JSON.stringify(sample)).toBe(reason);
      // The same event, recorded and fanned out: delivered exactly when the sample matched.
      const [id] = await record([eventOf(sample)]);
      await fanOutEvents(t.db.sql, [id!]);
      expect((await deliveredEvents(sub.id)).includes(id!), JSON.stringify(sample)).toBe(data?.sample?.matches);
    }
  });

  it('passes a check whose attribute the sample leaves out, and says so; no sample, no verdict', async () => {
    const sub = await subscribe(
      ['points.changed'],
      { brand_ids: [OUTLET], points_min: 10, points_types: ['earn'] },
      'acme-admin',
      'http://127.0.0.1:9/x',
    );
    expect((await testOf(sub.id, { sample: { type: 'points.changed', brand_id: OUTLET } })).data?.sample).toEqual({
      matches: true,
      reason: 'passes the filter (points, points_type not given: not checked)',
    });
    expect((await testOf(sub.id, { sample: { type: 'points.changed' } })).data?.sample?.reason).toBe(
      'passes the filter (brand_id, points, points_type not given: not checked)',
    );
    const plain = await subscribe(['coupon.issued'], null, 'acme-admin', 'http://127.0.0.1:9/x');
    expect(
      (await testOf(plain.id, { sample: { type: 'coupon.issued', brand_id: 'brand-acme' } })).data?.sample,
    ).toEqual({ matches: true, reason: 'no filter' });
    const bare = await testOf(plain.id);
    expect(bare.status).toBe(200);
    expect(bare.data).not.toHaveProperty('sample');
  });

  it.each([
    [{ sample: { type: 'points.gifted' } }, 'sample.type'],
    [{ sample: { brand_id: OUTLET } }, 'sample.type'],
    [{ sample: { type: 'points.changed', points: -1 } }, 'sample.points'],
    [{ sample: { type: 'points.changed', points_type: 'gift' } }, 'sample.points_type'],
    [{ sample: { type: 'coupon.issued', colour: 'red' } }, 'sample.colour'],
  ])('refuses %j with a 422 naming %s', async (body, field) => {
    const sub = await subscribe(['points.changed'], null, 'acme-admin', 'http://127.0.0.1:9/x');
    const { status, payload } = await testOf(sub.id, body);
    expect(status, payload).toBe(422);
    expect(payload).toContain(field);
  });
});

describe('POST /webhook-subscriptions/{id}/replay-missing', () => {
  it('creates the missed deliveries of matching events in event order, exactly once', async () => {
    const earlier = await record([points(OUTLET, 'earn', 5), points(OUTLET, 'earn', 20), coupon('brand-acme')]);
    const since = new Date(Date.now() - 60_000).toISOString();
    const sub = await subscribe(['points.changed'], { points_min: 10 });
    // Created later: the fan-out of the earlier events skips it.
    expect(await fanOutEvents(t.db.sql, earlier)).toBe(0);
    const [later] = await record([points(OUTLET, 'earn', 30)]);
    await fanOutEvents(t.db.sql, [later!]);
    const more = await record([points('brand-acme', 'spend', 11), points(OUTLET, 'earn', 12)]);
    await t.db.sql`DELETE FROM webhook_deliveries WHERE event_id = ANY(${more}::uuid[])`; // as if disabled then

    const first = await call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, { since });
    expect(first.statusCode, first.payload).toBe(202);
    expect((first.result as { data: object }).data).toMatchObject({ id: sub.id, replayed: 3, since, active: true });
    // in event order: due a microsecond apart, the order lanes claim in
    const replayedInOrder = await t.db.sql<{ event_id: string }[]>`
      SELECT event_id FROM webhook_deliveries WHERE subscription_id = ${sub.id} AND requeued_by = 'replay' ORDER BY next_attempt_at`;
    expect(replayedInOrder.map((d) => d.event_id)).toEqual([earlier[1], ...more]);
    const all = await t.db.sql<{ event_id: string; requeued_by: string | null }[]>`
      SELECT event_id, requeued_by FROM webhook_deliveries WHERE subscription_id = ${sub.id}`;
    expect(all.map((d) => d.event_id).sort()).toEqual([earlier[1], later, ...more].sort());
    expect(all.filter((d) => d.requeued_by === 'replay').length).toBe(3);

    const second = await call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, { since });
    expect((second.result as { data: { replayed: number } }).data.replayed).toBe(0);
  });

  it('concurrent replays of one window create each delivery once', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const ids = await record(Array.from({ length: 200 }, (_, i) => points(OUTLET, 'earn', i + 1)));
    const sub = await subscribe(['points.changed']);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, { since })),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202]);
    const replayed = answers.map((a) => (a.result as { data: { replayed: number } }).data.replayed);
    expect(replayed.reduce((a, b) => a + b, 0)).toBe(ids.length);
    const counts = await t.db.sql<{ events: number; rows: number }[]>`
      SELECT count(DISTINCT event_id)::int AS events, count(*)::int AS rows FROM webhook_deliveries WHERE subscription_id = ${sub.id}`;
    expect(counts[0]).toEqual({ events: ids.length, rows: ids.length });
  });

  it('never replays to a subscription the events about itself (the fan-out’s rule against loops)', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const watcher = await subscribe(['webhook_subscription.failing']);
    const other = await subscribe(['webhook_subscription.failing']);
    const failing = (subscriptionId: string): NewEvent => ({
      organizationId: 'org-acme',
      type: 'webhook_subscription.failing',
      data: {
        subscription_id: subscriptionId,
        url: 'https://hooks.acme.test/x',
        consecutive_failures: 10,
        disable_after: 100,
        last_status: 503,
        last_error: 'http_status',
        first_failure_at: since,
      },
    });
    const [aboutWatcher, aboutOther] = await record([failing(watcher.id), failing(other.id)]);
    const res = await call('POST', `/webhook-subscriptions/${watcher.id}/replay-missing`, { since });
    expect((res.result as { data: { replayed: number } }).data.replayed).toBe(1);
    expect(await deliveredEvents(watcher.id)).toEqual([aboutOther]);
    expect(await deliveredEvents(watcher.id)).not.toContain(aboutWatcher);
  });

  it('refuses a bad window with a 422 naming the field', async () => {
    const sub = await subscribe(['points.changed']);
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toISOString();
    const cases: [object, string][] = [
      [{}, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: at(-200 * 86_400_000) }, 'since'], // before the retention period (90 days by default)
      [{ since: at(-60_000), until: at(-120_000) }, 'until'],
      [{ since: at(-60_000), extra: 1 }, 'extra'],
    ];
    for (const [payload, field] of cases) {
      const res = await call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(JSON.stringify(res.result)).toContain(field);
    }
  });

  it('answers 404 for another organization’s subscription and replays nothing of another organization', async () => {
    await record([points('brand-globex', 'earn', 10, 'org-globex')]);
    const sub = await subscribe(['points.changed']);
    const since = new Date(Date.now() - 60_000).toISOString();
    const foreign = await call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, { since }, 'globex-admin');
    expect(foreign.statusCode).toBe(404);
    const own = await call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, { since });
    expect((own.result as { data: { replayed: number } }).data.replayed).toBe(0);
    const readonly = await call('POST', `/webhook-subscriptions/${sub.id}/replay-missing`, { since }, 'acme-readonly');
    expect(readonly.statusCode).toBe(403);
  });
});

describe('POST /events/{id}/resend', () => {
  it('queues a new delivery, then one more attempt of it, whatever the filter', async () => {
    const sub = await subscribe(['coupon.issued'], { brand_ids: ['brand-acme'] });
    const [event] = await record([points(OUTLET, 'earn', 1)]);
    const first = await call('POST', `/events/${event}/resend`, { subscription_id: sub.id });
    expect(first.statusCode, first.payload).toBe(202);
    const delivery = (first.result as { data: { id: string; status: string; event_id: string } }).data;
    expect(delivery).toMatchObject({ event_id: event, status: 'pending' });
    await t.db
      .sql`UPDATE webhook_deliveries SET status = 'delivered', attempts = 1, next_attempt_at = NULL WHERE id = ${delivery.id}`;
    const again = await call('POST', `/events/${event}/resend`, { subscription_id: sub.id });
    expect((again.result as { data: { id: string; status: string } }).data).toMatchObject({
      id: delivery.id,
      status: 'pending',
    });
    const [row] = await t.db.sql<{ max_attempts: number; requeued_by: string }[]>`
      SELECT max_attempts, requeued_by FROM webhook_deliveries WHERE id = ${delivery.id}`;
    expect(row).toEqual({ max_attempts: 2, requeued_by: 'resend' });
  });

  it('answers 404 across organizations, for a disabled subscription, and for unknown ids', async () => {
    const acme = await subscribe(['points.changed']);
    const globex = await subscribe(['points.changed'], null, 'globex-admin');
    const [acmeEvent] = await record([points(OUTLET, 'earn', 1)]);
    const [globexEvent] = await record([points('brand-globex', 'earn', 1, 'org-globex')]);
    const statusOf = async (event: string, subscription_id: string, client = 'acme-admin') =>
      (await call('POST', `/events/${event}/resend`, { subscription_id }, client)).statusCode;
    expect(await statusOf(globexEvent!, acme.id)).toBe(404); // another organization's event
    expect(await statusOf(acmeEvent!, globex.id)).toBe(404); // another organization's subscription
    expect(await statusOf(acmeEvent!, acme.id, 'globex-admin')).toBe(404);
    expect(await statusOf(acmeEvent!, globex.id, 'multi')).toBe(404); // both visible, organizations differ
    expect(await statusOf(crypto.randomUUID(), acme.id)).toBe(404);
    expect(await statusOf('not-a-uuid', acme.id)).toBe(422); // the path's format, as every uuid path
    await call('PATCH', `/webhook-subscriptions/${acme.id}`, { active: false });
    expect(await statusOf(acmeEvent!, acme.id)).toBe(404);
    const bad = await call('POST', `/events/${acmeEvent}/resend`, { subscription_id: 'nope' });
    expect(bad.statusCode).toBe(422);
    expect(JSON.stringify(bad.result)).toContain('subscription_id');
    const counts = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries`;
    expect(counts[0]?.n).toBe(0);
  });
});
