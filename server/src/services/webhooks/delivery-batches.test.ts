import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, type TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { emitMemberCreated, subscribeWebhook, useWebhookTestBed } from '#test-helpers/webhook-receiver.js';
import { createWebhookClient } from '../../lib/safe-fetch.js';
import { createSecretBox } from '../../lib/secret-box.js';
import {
  CLAIM_BATCH_MAX,
  fanOutEvents,
  LANE_SLICE_MS,
  MAX_HELD_CLAIMS,
  runDeliveryLane,
  type DeliveryContext,
} from './deliveries.js';
import { claimDueDeliveries } from './deliveries-claim.js';
import { recordAndClaim } from './deliveries-record.js';

/**
 * Lanes claim due deliveries in batches (services/webhooks/deliveries.ts): every delivery of a batch is
 * sent once and recorded once, a subscription never has more attempts in flight than lanes, a
 * failure is recorded (and may disable the subscription) before the lane sends anything more,
 * claims not sent are given back at once, a subscription disabled or deleted mid-batch gets at
 * most the rest of that batch, and a crashed lane's batch comes back after its lease. Real
 * PostgreSQL and a real receiver; the lanes are run directly, without the worker's queue.
 */
let t: TestServer;
let base: string;
let inFlight = 0;
let maxInFlight = 0;
/** Event ids in the order their requests arrived. */
const received: string[] = [];
/** Answers the request of the n-th arrival (0-based) instead of a 200, when set. */
let answer: ((n: number, res: ServerResponse) => Promise<boolean> | boolean) | undefined;

useWebhookTestBed(
  (req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const n = received.push(JSON.parse(Buffer.concat(chunks).toString()).id) - 1;
      const answered = (await answer?.(n, res)) ?? false;
      inFlight--;
      if (!answered) res.writeHead(200).end('ok');
    });
  },
  (bed) => {
    t = bed.t;
    base = bed.receiver.base;
  },
);

// Long enough that no attempt to the receiver in this process fails on a loaded machine: a
// failure would change the path a test follows (the receiver answers at once, or as told).
const client = createWebhookClient({ timeoutMs: 10_000, allowInsecure: true });
afterAll(() => client.close());
afterEach(() => {
  received.length = 0;
  maxInFlight = 0;
  answer = undefined;
});

const context = (overrides: Partial<DeliveryContext> = {}): DeliveryContext => ({
  sql: t.db.sql,
  client,
  retryDelays: [60, 60, 60, 60, 60, 60, 60],
  secrets: createSecretBox({ key: TEST_SECRET_KEY }),
  timeoutMs: 10_000,
  lanes: 2,
  ...overrides,
});

/** A subscription with `n` due deliveries (in event order); its id and the event ids. */
async function backlog(n: number) {
  const { id } = await subscribeWebhook(t, `${base}/hook`);
  const events = await emitMemberCreated(t, n);
  expect(await fanOutEvents(t.db.sql, events)).toBe(n);
  return { id, events };
}

/** Runs the lane (its runs, slice after slice) until a run made no attempt; every outcome. */
async function drain(ctx: DeliveryContext, subscriptionId: string, lane: number) {
  const outcomes: string[] = [];
  for (;;) {
    const run = await runDeliveryLane(ctx, subscriptionId, lane);
    if (!run.length) return outcomes;
    outcomes.push(...run);
  }
}

const deliveries = (subscriptionId: string) =>
  t.db.sql<{ event_id: string; status: string; attempts: number; claimed: boolean; logged: number }[]>`
    SELECT d.event_id, d.status, d.attempts, d.claimed_until IS NOT NULL AS claimed,
           (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = d.id) AS logged
    FROM webhook_deliveries d WHERE d.subscription_id = ${subscriptionId}`;

/** Until a statement of this database waits for a row lock (the interleaving a test builds). */
const untilSomeoneWaitsForALock = () =>
  until(
    async () =>
      (
        await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`
      )[0]!.n > 0,
    10_000,
  );

describe('batched delivery lanes', () => {
  it('claim a batch in due order, skip what other lanes hold, and nothing of a disabled subscription', async () => {
    const { id, events } = await backlog(10);
    const first = await claimDueDeliveries(t.db.sql, id, 4, 60);
    const second = await claimDueDeliveries(t.db.sql, id, 4, 60);
    const third = await claimDueDeliveries(t.db.sql, id, 4, 60);
    expect([first, second, third].map((b) => b.length)).toEqual([4, 4, 2]);
    expect(await claimDueDeliveries(t.db.sql, id, 4, 60)).toEqual([]);
    // due in event order (fan-out gives them the same time; the claim orders ties by id, and each
    // batch is in due order): together they are every delivery, once
    expect([...first, ...second, ...third].map((d) => d.event_id).sort()).toEqual([...events].sort());
    await t.db.sql`UPDATE webhook_deliveries SET claimed_until = NULL`;
    await t.db.sql`UPDATE webhook_subscriptions SET active = false WHERE id = ${id}`;
    expect(await claimDueDeliveries(t.db.sql, id, 4, 60)).toEqual([]);
  });

  it('claim the next batch in the statement that gives claims back, and say whether the subscription is still active', async () => {
    const { id } = await backlog(6);
    const held = await claimDueDeliveries(t.db.sql, id, 4, 60);
    const claim = { subscriptionId: id, limit: 4, leaseSeconds: 60 };
    const next = await recordAndClaim(t.db.sql, [], held, claim);
    expect(next.active).toBe(true);
    // the claims given back are not taken again by the same statement: the 2 others are
    expect(next.targets).toHaveLength(2);
    expect(next.targets.filter((d) => held.some((h) => h.id === d.id))).toEqual([]);
    await t.db.sql`UPDATE webhook_subscriptions SET active = false WHERE id = ${id}`;
    expect(await recordAndClaim(t.db.sql, [], next.targets, claim)).toEqual({ targets: [], active: false });
    await t.db.sql`DELETE FROM webhook_subscriptions WHERE id = ${id}`;
    expect(await recordAndClaim(t.db.sql, [], [], claim)).toEqual({ targets: [], active: false });
  });

  it('send every delivery once, record each attempt once, and keep to the lanes in flight', async () => {
    const { id, events } = await backlog(300);
    const ctx = context();
    const outcomes = (await Promise.all([drain(ctx, id, 0), drain(ctx, id, 1)])).flat();
    expect(outcomes).toHaveLength(300);
    expect(outcomes.every((o) => o === 'delivered')).toBe(true);
    expect([...received].sort()).toEqual([...events].sort());
    expect(maxInFlight).toBeGreaterThanOrEqual(1);
    expect(maxInFlight).toBeLessThanOrEqual(2);
    const rows = await deliveries(id);
    expect(
      rows.filter((d) => d.status === 'delivered' && d.attempts === 1 && d.logged === 1 && !d.claimed),
    ).toHaveLength(300);
  });

  it('record a failure before sending anything more: a 410 mid-batch disables the subscription and gives the rest back', async () => {
    const { id } = await backlog(2 * CLAIM_BATCH_MAX);
    answer = (n, res) => {
      if (n !== 5) return false;
      res.writeHead(410).end('gone');
      return true;
    };
    const outcomes = await drain(context(), id, 0);
    expect(outcomes).toEqual([...Array(5).fill('delivered'), 'final']);
    expect(received).toHaveLength(6); // nothing after the failure
    const [sub] = await t.db.sql`SELECT active, disabled_reason FROM webhook_subscriptions WHERE id = ${id}`;
    expect(sub).toEqual({ active: false, disabled_reason: 'endpoint_gone' });
    const rows = await deliveries(id);
    expect(rows.filter((d) => d.status === 'failed' && d.logged === 1)).toHaveLength(1);
    // the claims not sent are given back at once, untouched: pending, parked until it is enabled
    const rest = rows.filter((d) => d.status === 'pending');
    expect(rest).toHaveLength(2 * CLAIM_BATCH_MAX - 6);
    expect(rest.every((d) => !d.claimed && d.attempts === 0 && d.logged === 0)).toBe(true);
  });

  it('end a run at its slice when every attempt fails (its turn is over, however much is due)', async () => {
    const { id } = await backlog(200);
    answer = (_n, res) => {
      setTimeout(() => res.writeHead(500).end('down'), 5);
      return true;
    };
    const started = performance.now();
    const outcomes = await runDeliveryLane(context(), id, 0);
    expect(performance.now() - started).toBeLessThan(LANE_SLICE_MS + 1000);
    expect(outcomes.length).toBeLessThan(200);
    expect(outcomes.every((o) => o === 'retry')).toBe(true);
    const rows = await deliveries(id);
    expect(rows.filter((d) => d.attempts === 1 && d.logged === 1)).toHaveLength(outcomes.length);
    expect(rows.every((d) => d.status === 'pending' && !d.claimed)).toBe(true);
  });

  it('send fewer than MAX_HELD_CLAIMS once the subscription is deleted mid-batch', async () => {
    const { id } = await backlog(8 * CLAIM_BATCH_MAX);
    // The user's DELETE, answered before the 41st attempt is: its status (or its error) shows.
    let deletion: unknown = 'not asked';
    answer = async (n) => {
      if (n === 40) {
        const res = await t
          .inject({ method: 'DELETE', url: `/webhook-subscriptions/${id}`, headers: await t.auth('acme-admin') })
          .catch((error: unknown) => ({ statusCode: String(error), payload: '' }));
        deletion = res.statusCode === 200 ? 'deleted' : `${res.statusCode} ${res.payload}`;
      }
      return false;
    };
    await drain(context(), id, 0);
    expect(deletion).toBe('deleted');
    const after = received.length - 40 - 1;
    expect(after).toBeLessThan(MAX_HELD_CLAIMS);
    expect(received.length).toBeLessThan(8 * CLAIM_BATCH_MAX);
    expect(await deliveries(id)).toEqual([]);
  });

  it('let DELETE /webhook-subscriptions/{id} through a deadlock with a lane that records a delivery meanwhile', async () => {
    const { id } = await backlog(1);
    // An attempt failed before, so recording a delivered one resets the subscription's count.
    await t.db.sql`UPDATE webhook_subscriptions SET consecutive_failures = 1 WHERE id = ${id}`;
    const [target] = await claimDueDeliveries(t.db.sql, id, 1, 60);
    const lane = await t.db.sql.reserve();
    try {
      await lane`BEGIN`;
      // The lane's transaction holds the delivery's row (recordAndClaim updates it first) ...
      await lane`SELECT 1 FROM webhook_deliveries WHERE id = ${target!.id} FOR UPDATE`;
      const deleting = t.inject({
        method: 'DELETE',
        url: `/webhook-subscriptions/${id}`,
        headers: await t.auth('acme-admin'),
      });
      // ... the DELETE holds the subscription's row and waits for the delivery's (its cascade) ...
      await untilSomeoneWaitsForALock();
      // ... and the lane's record wants the subscription's row to reset its count: PostgreSQL ends
      // the one that waited first, the DELETE, after deadlock_timeout.
      const sent = {
        target: target!,
        attempt: 1,
        attemptedAt: new Date(),
        result: { statusCode: 200, error: null, durationMs: 3, snippet: 'ok' },
      };
      const recorded = await recordAndClaim(lane, [sent], []).then(
        () => 'recorded',
        (error: { code?: string }) => error.code,
      );
      await (recorded === 'recorded' ? lane`COMMIT` : lane`ROLLBACK`);
      const res = await deleting;
      expect(res.statusCode, res.payload).toBe(200);
    } finally {
      lane.release();
    }
    expect(await t.db.sql`SELECT 1 FROM webhook_subscriptions WHERE id = ${id}`).toHaveLength(0);
    expect(await deliveries(id)).toEqual([]);
  });

  it('send fewer than MAX_HELD_CLAIMS once the subscription is disabled mid-batch, and give back the claims', async () => {
    const { id } = await backlog(8 * CLAIM_BATCH_MAX);
    answer = async (n) => {
      if (n === 40) await t.db.sql`UPDATE webhook_subscriptions SET active = false WHERE id = ${id}`;
      return false;
    };
    const outcomes = await drain(context(), id, 0);
    expect(outcomes.length - 41).toBeLessThan(MAX_HELD_CLAIMS);
    const rows = await deliveries(id);
    expect(rows.filter((d) => d.status === 'delivered' && d.logged === 1)).toHaveLength(outcomes.length);
    const rest = rows.filter((d) => d.status === 'pending');
    expect(rest).toHaveLength(8 * CLAIM_BATCH_MAX - outcomes.length);
    expect(rest.every((d) => !d.claimed && d.attempts === 0)).toBe(true);
  });

  it('end quietly when the subscription is deleted while the lane is taken: no foreign-key error, no retry', async () => {
    const { id } = await backlog(3);
    const deleter = await t.db.sql.reserve();
    try {
      await deleter`BEGIN`;
      await deleter`DELETE FROM webhook_subscriptions WHERE id = ${id}`;
      // The lane's first statement runs while the delete holds the subscription's row.
      const run = runDeliveryLane(context(), id, 0).then(
        (outcomes) => ({ outcomes }),
        (error: unknown) => ({ error: String(error) }),
      );
      await untilSomeoneWaitsForALock();
      await deleter`COMMIT`;
      expect(await run).toEqual({ outcomes: [] });
    } finally {
      deleter.release();
    }
    expect(await t.db.sql`SELECT 1 FROM webhook_lanes WHERE subscription_id = ${id}`).toHaveLength(0);
    expect(received).toHaveLength(0);
  });

  it("send a crashed lane's batch once its lease has passed, each delivery once", async () => {
    const { id, events } = await backlog(20);
    // Claimed for a minute, then the lane died. A lease of 1 s ran out before the drain below on a
    // busy machine: the lease is passed by moving it into the past, not by waiting for it.
    const crashed = await claimDueDeliveries(t.db.sql, id, 8, 60);
    expect(crashed).toHaveLength(8);
    const ctx = context({ leaseMarginSeconds: 0 });
    expect(await drain(ctx, id, 0)).toHaveLength(12); // the others only
    expect(received).toHaveLength(12);
    await t.db.sql`
      UPDATE webhook_deliveries SET claimed_until = now() - interval '1 second'
      WHERE id = ANY(${crashed.map((d) => d.id)}::uuid[])`;
    expect(await drain(ctx, id, 0)).toHaveLength(8);
    expect([...received].sort()).toEqual([...events].sort());
  });
});
