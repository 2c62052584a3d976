import type postgres from 'postgres';
import type { Db, Sql } from '../../db/pool.js';
import { defined, firstRow } from '../../lib/defined.js';
import { outcomeOf, type WebhookClient } from '../../lib/safe-fetch.js';
import type { Schemas } from '../../lib/schemas.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { signDelivery } from '@loyalty/sdk/signing';
import { claimDueDeliveries, type Claim, type Target } from './deliveries-claim.js';
import {
  recordAndClaim,
  recordBatch,
  type AttemptOutcome,
  type RecordedAttempt,
  type SentAttempt,
} from './deliveries-record.js';
import { SELF_EVENT_TYPES, type Warning } from './delivery-warnings.js';
import type { HealthRules } from './subscription-health.js';
import { passesFilter } from './subscription-filter.js';

export type { AttemptOutcome } from './deliveries-record.js';

/**
 * Webhook delivery: one row per (subscription, event), one attempt row per request sent, and a
 * few *lanes* per subscription that send them (issue 11: one dead receiver must use its own share
 * of the workers, no more, however long its backlog).
 *
 * A lane is a graphile-worker job `deliver_webhook` with `{ subscription_id, lane }` and the key
 * `webhook_lane:<subscription>:<lane>`. It claims a batch of the subscription's next due
 * deliveries (a lease, `claimed_until`, past the attempts' timeout: a crashed lane's deliveries
 * are claimed again once it has passed; deliveries-claim.ts), sends them one at a time, records
 * them together (the retry schedule sets `next_attempt_at`; deliveries-record.ts), and goes on
 * with the next batch for a short slice of time (runDeliveryLane); then it queues itself again, behind every
 * other subscription's lanes: subscriptions take turns. With nothing due it sleeps until the
 * subscription's next retry, or ends when nothing is pending. The queue holds a handful of jobs
 * per subscription whatever its backlog, so a backlog costs the other subscriptions nothing, and
 * a subscription never has more attempts in flight than lanes (config.webhookConcurrencyPerSubscription).
 */

/** graphile-worker retries of a lane that threw (database trouble), not of HTTP failures. */
const JOB_MAX_ATTEMPTS = 25;
/** A lane that is still sending after this long goes back in the queue after its attempt. */
export const LANE_SLICE_MS = 250;

/** The most lanes a subscription may have (LOYALTY_WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION). */
export const MAX_LANES = 64;

const LANE_KEY_PREFIX = 'webhook_lane:';
export const laneKey = (subscriptionId: string, lane: number) => `${LANE_KEY_PREFIX}${subscriptionId}:${lane}`;
/** Every lane key a subscription can have (a delete removes its lanes from the queue). */
export const allLaneKeys = (subscriptionId: string) =>
  Array.from({ length: MAX_LANES }, (_, lane) => laneKey(subscriptionId, lane));

/**
 * SQL that wakes lanes 0..lanes-1 of each subscription in `subs` (a query of subscription ids)
 * now: a waiting or sleeping lane job is brought forward, else one is queued. A lane that is
 * running meanwhile keeps running; the new job finds it busy and ends (runDeliveryLane). The
 * subscriptions are share-locked until the caller commits, which a lane giving itself up waits
 * for (sleepLane): a delivery created meanwhile is seen by the lane, or the lane is free for the
 * new job.
 */
const wakeLanes = (db: Db, subs: postgres.PendingQuery<postgres.Row[]>, lanes: number) => db`
  WITH w AS (SELECT id FROM webhook_subscriptions WHERE id IN (${subs}) AND active FOR SHARE)
  SELECT graphile_worker.add_job('deliver_webhook', json_build_object('subscription_id', w.id, 'lane', l),
           max_attempts => ${JOB_MAX_ATTEMPTS}, job_key => ${LANE_KEY_PREFIX} || w.id || ':' || l, job_key_mode => 'replace')
  FROM w, generate_series(0, ${lanes}::int - 1) l`;

/** Wakes the lanes of the subscriptions (manual retries): see wakeLanes. */
export async function wakeDeliveryLanes(db: Db, subscriptionIds: string[], lanes: number): Promise<void> {
  await wakeLanes(db, db`SELECT unnest(${subscriptionIds}::uuid[])`, lanes);
}

/**
 * The rule against loops (delivery-warnings.ts): an event about a subscription (`e`), one of
 * SELF_EVENT_TYPES, is never delivered to that subscription (`s`), only to the organization's others.
 */
export const notAboutItself = (db: Db) => db`
  NOT (e.type = ANY(${[...SELF_EVENT_TYPES]}::text[]) AND e.data->>'subscription_id' = s.id::text)`;

/**
 * `fan_out_events`: a delivery per event and matching subscription (active, subscribed to the
 * type, existing when the event happened, its filter passed: subscription-filter.ts, not the
 * subscription the event is about), due now, and the lanes of those subscriptions woken.
 * Idempotent: a rerun finds the deliveries and creates nothing. Returns the deliveries created.
 */
export async function fanOutEvents(db: Db, eventIds: string[], lanes = 4): Promise<number> {
  if (!eventIds.length) return 0;
  // Due now on the subscription's organization's clock: the clocks that are not at real time are
  // read once per statement (a few rows, none outside sandbox mode), not once per delivery.
  const rows = await db<{ created: number }[]>`
    WITH clocks AS MATERIALIZED (
      SELECT organization_id, loyalty_now(organization_id) AS now FROM sandbox_clocks
    ), created AS (
      INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_attempt_at)
      SELECT s.id, e.id, e.type, coalesce(c.now, now())
      FROM events e
      JOIN webhook_subscriptions s
        ON s.organization_id = e.organization_id AND s.active AND e.type = ANY(s.events) AND s.created_at <= e.created_at
          AND ${passesFilter(db)}
      LEFT JOIN clocks c ON c.organization_id = s.organization_id
      WHERE e.id = ANY(${eventIds}::uuid[]) AND ${notAboutItself(db)}
      ON CONFLICT (subscription_id, event_id) DO NOTHING
      RETURNING subscription_id
    ), woken AS (
      ${wakeLanes(db, db`SELECT DISTINCT subscription_id FROM created`, lanes)}
    )
    SELECT (SELECT count(*)::int FROM created) AS created, (SELECT count(*) FROM woken) AS woken`;
  return firstRow(rows, 'the count of created deliveries').created;
}

/**
 * The stall check's safety net (resume_stalled_jobs): wakes the lanes of subscriptions with a delivery
 * overdue by more than `overdueSeconds` on their organization's clock, e.g. after a worker died
 * holding all of its lanes; only `organizationId`'s subscriptions when given (a move of its clock).
 * The clock is read once per subscription, not per delivery.
 */
export async function wakeOverdueLanes(
  db: Db,
  lanes: number,
  overdueSeconds = 60,
  organizationId?: string,
): Promise<void> {
  await wakeLanes(
    db,
    db`
    SELECT s.id FROM webhook_subscriptions s
    WHERE ${organizationId === undefined ? db`true` : db`s.organization_id = ${organizationId}`}
      AND EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.subscription_id = s.id AND d.status = 'pending'
          AND d.next_attempt_at < loyalty_now(s.organization_id) - make_interval(secs => ${overdueSeconds}))`,
    lanes,
  );
}

/** The exact bytes sent (and signed): the same on every attempt of the event. */
export const envelopeOf = (
  t: Pick<Target, 'event_id' | 'event_type' | 'event_created_at' | 'organization_id' | 'data'>,
): string =>
  JSON.stringify({
    id: t.event_id,
    type: t.event_type,
    created_at: t.event_created_at.toISOString(),
    organization_id: t.organization_id,
    data: t.data,
  });

export type DeliveryContext = {
  sql: Sql;
  client: WebhookClient;
  retryDelays: number[];
  /** Opens the stored (sealed) secrets; a key that cannot fails the attempt before anything is sent. */
  secrets: SecretBox;
  /** Acknowledgement time of an attempt: a claim's lease outlasts it. */
  timeoutMs: number;
  /** Lanes per subscription (config.webhookConcurrencyPerSubscription). */
  lanes: number;
  /**
   * How long past an attempt's timeout its claim and its lane stay leased (config.stalledJobSeconds,
   * default 60): what a killed worker held is sent by another (or the next start) after that long.
   */
  leaseMarginSeconds?: number;
  /** Told of each attempt once it is recorded (the worker's log line); never the URL or a secret. */
  onAttempt?: (attempt: DeliveryAttemptRecord) => void;
  /** When a subscription is disabled for failing (services/webhooks/subscription-health.ts); default DEFAULT_HEALTH_RULES. */
  healthRules?: HealthRules;
};

/** What the log says of one delivery attempt. */
export type DeliveryAttemptRecord = {
  subscription_id: string;
  delivery_id: string;
  attempt: number;
  outcome: AttemptOutcome;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The attempt's X-Request-Id (attemptRequestId): in the receiver's request, the delivery log and this record. */
  request_id: string;
  /** Set when this attempt disabled the subscription (subscription-health.ts): why. */
  subscription_disabled?: Schemas['WebhookDisabledReason'];
  /** The warning events this attempt raised (`webhook_delivery.exhausted`, `webhook_subscription.failing`). */
  warnings?: Warning[];
};

/**
 * The X-Request-Id of a delivery attempt: `<delivery id>.<attempt>`, sent with it, shown in the
 * delivery log and logged with it, so a receiver's report of one request names one attempt.
 */
export const attemptRequestId = (deliveryId: string, attempt: number): string => `${deliveryId}.${attempt}`;

/** Every header of an attempt: both signature schemes (every valid secret, newest first) and the Loyalty-* headers. */
export const deliveryHeaders = (a: {
  body: string;
  eventId: string;
  eventType: string;
  attempt: number;
  attemptedAt: Date;
  secrets: string[];
  requestId: string;
}): Record<string, string> => ({
  ...signDelivery(a.body, a.eventId, Math.floor(a.attemptedAt.getTime() / 1000), a.secrets),
  'Loyalty-Message-Id': a.eventId,
  'Loyalty-Event': a.eventType,
  'Loyalty-Attempt': String(a.attempt),
  'X-Request-Id': a.requestId,
});

/**
 * A batch is sized to take about this long at the attempt time seen for the subscription (one
 * delivery until an attempt was timed), CLAIM_BATCH_MAX at most: a fast receiver's lane claims
 * and records many deliveries per commit, a slow one's claims one at a time and leaves the rest
 * to its other lanes. One slice (LANE_SLICE_MS): at 50 ms, attempts slowed by a busy machine
 * (12–20 ms with 8 subscriptions) shrank batches to 2–4, a statement per few deliveries, which
 * slowed them further (issue 30: 710 deliveries/s with 8 subscriptions, 1,497/s at 250 ms).
 */
export const BATCH_TARGET_MS = LANE_SLICE_MS;
/** The most deliveries a lane claims in one statement. */
export const CLAIM_BATCH_MAX = 32;
/**
 * The most deliveries a lane holds claimed at once: the batch it sends and the next one, claimed
 * meanwhile. A lane sends fewer than this many once its subscription is disabled or deleted.
 */
export const MAX_HELD_CLAIMS = 2 * CLAIM_BATCH_MAX;

/** Attempt time (ms, a moving average) per subscription in this process, to size lanes' batches; a hint only. */
const attemptMs = new Map<string, number>();
const ATTEMPT_MS_ENTRIES = 10_000;

type Sent = { sent: SentAttempt[]; stopped: 'failed' | 'slice' | 'inactive' | 'error' | undefined; error?: unknown };

/**
 * One run of a lane: due deliveries of the subscription, for LANE_SLICE_MS (one attempt at
 * least); then the lane is queued again now (more is due), at the next retry, or not at all.
 *
 * The lane claims a batch of due deliveries in one statement and sends them one at a time (the
 * lane is the unit of concurrency). While it sends a batch, one statement records the batch
 * before it (every attempt delivered) and claims the next (deliveries-record.ts), so the database
 * waits overlap the sending, and a batch costs one commit. A batch ends early at the first attempt
 * that did not deliver, or when the slice is over: then, once the statement under way has
 * finished, the batch's attempts are recorded (a failure counted by the health rules, in order,
 * before the lane sends anything more) and the claims it did not send, of this batch and the
 * next, are given back at once. A crash in between loses nothing: what was claimed and not
 * recorded is claimed again once its lease has passed (at-least-once; receivers dedupe by
 * Loyalty-Message-Id). A claim needs the subscription active, and the statement under way says
 * whether it still is, so once it is disabled or deleted a lane stops at its next send after the
 * first statement begun since has answered (usually within a few sends); at most it sends what it
 * holds claimed: fewer than MAX_HELD_CLAIMS deliveries, only those it starts within its slice.
 * Returns the outcomes of the attempts it made.
 */
export async function runDeliveryLane(
  ctx: DeliveryContext,
  subscriptionId: string,
  lane: number,
): Promise<AttemptOutcome[]> {
  const started = performance.now();
  const sliceOver = () => performance.now() - started >= LANE_SLICE_MS;
  const outcomes: AttemptOutcome[] = [];
  if (!(await takeLane(ctx, subscriptionId, lane))) return outcomes; // running elsewhere: that run goes on
  // Every attempt a claim holds starts within the slice and ends within its timeout.
  const leaseSeconds = LANE_SLICE_MS / 1000 + ctx.timeoutMs / 1000 + (ctx.leaseMarginSeconds ?? 60);
  const claim = (): Claim => {
    const ms = attemptMs.get(subscriptionId);
    const limit = ms === undefined ? 1 : Math.floor(BATCH_TARGET_MS / Math.max(ms, 0.01));
    return { subscriptionId, limit: Math.max(1, Math.min(CLAIM_BATCH_MAX, limit)), leaseSeconds };
  };
  const report = (recorded: RecordedAttempt[], sent: SentAttempt[]) =>
    outcomes.push(...sent.map((s, i) => reportAttempt(ctx, s, defined(recorded[i], 'the recorded attempt'))));
  try {
    let batch = await claimDueDeliveries(ctx.sql, subscriptionId, claim().limit, leaseSeconds);
    let unrecorded: SentAttempt[] = []; // the batch before, every attempt delivered
    for (;;) {
      if (!batch.length) {
        if (unrecorded.length) report(await recordBatch(ctx, unrecorded, []), unrecorded);
        await sleepLane(ctx.sql, subscriptionId, lane);
        return outcomes;
      }
      const recording = unrecorded;
      const subscription = { active: true };
      const statement = recordAndClaim(ctx.sql, recording, [], claim()).then(({ targets, active }) => {
        subscription.active = active; // disabled or deleted meanwhile: the batch stops at its next send
        return targets;
      });
      statement.catch(() => {}); // awaited below, after the batch; a rejection meanwhile is not unhandled
      const { sent, stopped, error } = await sendBatch(ctx, batch, sliceOver, subscription);
      const next = await statement;
      report(
        recording.map(() => ({ outcome: 'delivered' })),
        recording,
      );
      if (!stopped) {
        unrecorded = sent;
        batch = next;
        continue;
      }
      // the turn is over (not after an error: graphile-worker runs the lane again after its backoff)
      const requeue = stopped !== 'error' && (stopped === 'slice' || sliceOver());
      const rest = [...batch.slice(sent.length), ...next];
      report(
        await recordBatch(ctx, sent, rest, requeue ? (tx) => requeueLane(tx, subscriptionId, lane) : undefined),
        sent,
      );
      if (stopped === 'error') throw error;
      if (requeue) return outcomes;
      // a failure was recorded (and may have disabled the subscription), or the subscription is
      // gone: claim afresh (nothing, unless it is active)
      unrecorded = [];
      batch = await claimDueDeliveries(ctx.sql, subscriptionId, claim().limit, leaseSeconds);
    }
  } catch (error) {
    // graphile-worker runs the lane again later (its backoff); meanwhile the lane is free for a wake-up.
    await ctx.sql`UPDATE webhook_lanes SET busy_until = NULL WHERE subscription_id = ${subscriptionId} AND lane = ${lane}`.catch(
      () => {},
    );
    throw error;
  }
}

/**
 * A claimed batch POSTed one at a time, each with both signatures (every valid secret, newest
 * first), until the first attempt that does not deliver, the end of the slice (the first of a
 * batch is sent whatever the time: a batch is claimed only within the slice), the statement under
 * way finding the subscription disabled or deleted (`subscription.active`, checked before each
 * send), or a failure before sending (a key that cannot open the secret: `error`). Records nothing.
 */
async function sendBatch(
  ctx: DeliveryContext,
  targets: Target[],
  sliceOver: () => boolean,
  subscription: { active: boolean },
): Promise<Sent> {
  const sent: SentAttempt[] = [];
  for (const target of targets) {
    if (!subscription.active) return { sent, stopped: 'inactive' };
    if (sent.length && sliceOver()) return { sent, stopped: 'slice' };
    const attempt = target.attempts + 1;
    const body = envelopeOf(target);
    const attemptedAt = new Date();
    let headers: Record<string, string>;
    try {
      headers = deliveryHeaders({
        body,
        eventId: target.event_id,
        eventType: target.event_type,
        attempt,
        attemptedAt,
        secrets: target.secrets.map(ctx.secrets.open),
        requestId: attemptRequestId(target.id, attempt),
      });
    } catch (error) {
      return { sent, stopped: 'error', error };
    }
    const posted = performance.now();
    const result = await ctx.client.post(target.url, body, headers);
    timeAttempt(target.subscription_id, performance.now() - posted);
    sent.push({ target, attempt, attemptedAt, result });
    if (outcomeOf(result) !== 'delivered') return { sent, stopped: 'failed' };
  }
  return { sent, stopped: sliceOver() ? 'slice' : undefined };
}

function timeAttempt(subscriptionId: string, ms: number) {
  const before = attemptMs.get(subscriptionId);
  if (before === undefined && attemptMs.size >= ATTEMPT_MS_ENTRIES) attemptMs.clear();
  attemptMs.set(subscriptionId, before === undefined ? ms : before * 0.9 + ms * 0.1);
}

/** The worker's log line of a recorded attempt; its outcome. */
function reportAttempt(ctx: DeliveryContext, s: SentAttempt, recorded: RecordedAttempt): AttemptOutcome {
  const { target, attempt, result } = s;
  try {
    ctx.onAttempt?.({
      subscription_id: target.subscription_id,
      delivery_id: target.id,
      attempt,
      outcome: recorded.outcome,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: result.durationMs,
      request_id: attemptRequestId(target.id, attempt),
      ...(recorded.disabled ? { subscription_disabled: recorded.disabled } : {}),
      ...(recorded.warnings ? { warnings: recorded.warnings } : {}),
    });
  } catch {
    // a log line that cannot be written does not fail a delivery that was sent and recorded
  }
  return recorded.outcome;
}

/**
 * The lane for this run, unless another run holds it; held for a slice and an attempt at most (a
 * lease). A subscription deleted meanwhile has no lane to take: its row is read FOR KEY SHARE, so
 * a delete in progress is waited for and then the row is gone (nothing inserted, the run ends
 * quietly), and a delete that comes later waits for this statement, instead of the foreign key
 * failing the insert and the job retrying (issue 25).
 */
async function takeLane(ctx: DeliveryContext, subscriptionId: string, lane: number): Promise<boolean> {
  const leaseSeconds = LANE_SLICE_MS / 1000 + ctx.timeoutMs / 1000 + (ctx.leaseMarginSeconds ?? 60);
  const taken = await ctx.sql`
    INSERT INTO webhook_lanes AS l (subscription_id, lane, busy_until)
    SELECT id, ${lane}, now() + make_interval(secs => ${leaseSeconds}) FROM webhook_subscriptions WHERE id = ${subscriptionId}
    FOR KEY SHARE
    ON CONFLICT (subscription_id, lane) DO UPDATE SET busy_until = excluded.busy_until
    WHERE l.busy_until IS NULL OR l.busy_until < now()
    RETURNING 1`;
  return taken.length > 0;
}

/**
 * The lane given back, and queued again now, behind the lanes already waiting (preserve_run_at: a
 * wake-up meanwhile keeps its time); in the transaction that records the lane's last batch.
 */
async function requeueLane(tx: Db, subscriptionId: string, lane: number) {
  await tx`UPDATE webhook_lanes SET busy_until = NULL WHERE subscription_id = ${subscriptionId} AND lane = ${lane}`;
  await tx`
    SELECT graphile_worker.add_job('deliver_webhook', json_build_object('subscription_id', ${subscriptionId}::uuid, 'lane', ${lane}::int),
             max_attempts => ${JOB_MAX_ATTEMPTS}, job_key => ${laneKey(subscriptionId, lane)}, job_key_mode => 'preserve_run_at')`;
}

/**
 * Nothing due: the lane is given back and sleeps until the subscription's next retry, or ends
 * when nothing is pending but what other lanes have claimed (they carry on after their attempt).
 * It first takes the subscription's row lock, which waits for fan-outs in progress (they hold a
 * share lock): their deliveries are seen here, or their wake-up's job finds the lane free.
 */
async function sleepLane(sql: Sql, subscriptionId: string, lane: number) {
  await sql.begin(async (tx) => {
    await tx`SELECT 1 FROM webhook_subscriptions WHERE id = ${subscriptionId} FOR NO KEY UPDATE`;
    await tx`UPDATE webhook_lanes SET busy_until = NULL WHERE subscription_id = ${subscriptionId} AND lane = ${lane}`;
    await tx`
      SELECT graphile_worker.add_job('deliver_webhook', json_build_object('subscription_id', ${subscriptionId}::uuid, 'lane', ${lane}::int),
               run_at => greatest(next_at - ahead, now()), max_attempts => ${JOB_MAX_ATTEMPTS}, job_key => ${laneKey(subscriptionId, lane)},
               job_key_mode => 'preserve_run_at')
      FROM (
        SELECT min(next_attempt_at) AS next_at,
               (SELECT loyalty_now(organization_id) - now() FROM webhook_subscriptions WHERE id = ${subscriptionId}) AS ahead
        FROM webhook_deliveries
        WHERE subscription_id = ${subscriptionId} AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
      ) n
      WHERE next_at IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = ${subscriptionId} AND active)`;
  });
}
