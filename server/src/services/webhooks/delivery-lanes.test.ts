import { describe, expect, it } from 'vitest';
import type { TestServer } from '#test-helpers/server.js';
import { until as untilTruthy } from '#test-helpers/until.js';
import { emitMemberCreated, subscribeWebhook, useWebhookTestBed } from '#test-helpers/webhook-receiver.js';
import type { Config } from '../../config.js';
import { startWorker } from '../../worker.js';
import { wakeOverdueLanes } from './deliveries.js';

/**
 * Delivery lanes (services/webhooks/deliveries.ts): a subscription never has more attempts in flight than
 * lanes, however events arrive; no delivery waits for a wake-up that was lost; a lane whose
 * worker died, and attempt jobs of older versions, do not strand deliveries.
 */
let t: TestServer;
let base: string;
let inFlight = 0;
let maxInFlight = 0;
const received: string[] = [];

const { run } = useWebhookTestBed(
  (req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () =>
      setTimeout(() => {
        received.push(body);
        inFlight--;
        res.writeHead(200).end('ok');
      }, 100),
    );
  },
  (bed) => {
    t = bed.t;
    base = bed.receiver.base;
  },
);

const config = (overrides: Partial<Config> = {}): Config => ({
  ...t.config,
  webhookRetryDelays: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2],
  webhookTimeoutMs: 2000,
  ...overrides,
});
const work = (overrides: Partial<Config> = {}, only?: string[]) =>
  run(() =>
    startWorker({ connectionString: t.db.url, sql: t.db.sql, config: config(overrides), pollInterval: 50, only }),
  );

const subscribe = async () => (await subscribeWebhook(t, `${base}/hook`)).id;
const emit = (n: number) => emitMemberCreated(t, n);
const until = (what: () => Promise<boolean> | boolean, timeoutMs = 15_000) => untilTruthy(what, timeoutMs, 25);

/** A lane taken by a worker that died, and a delivery it had claimed, with no job left in the queue; the event's id. */
async function deadWorkersDelivery(): Promise<string> {
  const subscriptionId = await subscribe();
  received.length = 0;
  const [eventId] = await emit(1);
  await t.db.sql`DELETE FROM graphile_worker._private_jobs`;
  await t.db.sql`
    INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_attempt_at, claimed_until)
    VALUES (${subscriptionId}, ${eventId!}, 'member.created', now() - interval '2 minutes', now() - interval '1 minute')`;
  await t.db
    .sql`INSERT INTO webhook_lanes (subscription_id, lane, busy_until) VALUES (${subscriptionId}, 0, now() - interval '1 minute')`;
  return eventId!;
}

describe('delivery lanes', () => {
  it('keep a subscription to its lanes in flight while events keep arriving, and deliver each event once', async () => {
    await subscribe();
    received.length = 0;
    maxInFlight = 0;
    await work({ webhookConcurrencyPerSubscription: 2 });
    const ids: string[] = [];
    for (let batch = 0; batch < 6; batch++) {
      ids.push(...(await emit(4)));
      await new Promise((r) => setTimeout(r, 60)); // while attempts of earlier batches are in flight
    }
    await until(() => received.length >= ids.length);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.map((b) => JSON.parse(b).id).sort()).toEqual([...ids].sort());
    expect(maxInFlight).toBe(2);
  });

  it('deliver what a lane of a dead worker held, once the safety net runs', async () => {
    const eventId = await deadWorkersDelivery();
    await work({}, ['deliver_webhook', 'fan_out_events']); // without the stall check
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(0); // nothing wakes it by itself
    await wakeOverdueLanes(t.db.sql, t.config.webhookConcurrencyPerSubscription);
    await until(() => received.length === 1);
    expect(JSON.parse(received[0]!).id).toBe(eventId);
  });

  it('deliver what a lane of a dead worker held when a worker starts (its stall check runs at once)', async () => {
    const eventId = await deadWorkersDelivery();
    await work({ stalledJobSeconds: 30 });
    await until(() => received.length === 1);
    expect(JSON.parse(received[0]!).id).toBe(eventId);
  });

  it('deliver what an attempt job of an older version points at', async () => {
    const subscriptionId = await subscribe();
    received.length = 0;
    const [eventId] = await emit(1);
    await t.db.sql`DELETE FROM graphile_worker._private_jobs`;
    const [delivery] = await t.db.sql<{ id: string }[]>`
      INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_attempt_at)
      VALUES (${subscriptionId}, ${eventId!}, 'member.created', now()) RETURNING id`;
    await t.db
      .sql`SELECT graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', ${delivery!.id}::uuid, 'attempt', 1))`;
    await work();
    await until(() => received.length === 1);
    expect(JSON.parse(received[0]!).id).toBe(eventId);
  });
});
