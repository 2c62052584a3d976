import type { Db, Sql } from '../db/pool.js';
import { outcomeOf, type PostResult, type WebhookClient } from '../lib/safe-fetch.js';
import type { SecretBox } from '../lib/secret-box.js';
import { signDelivery } from '../lib/signing.js';
import type { SubscriptionGate } from '../lib/subscription-gate.js';

/**
 * Webhook delivery: one row per (subscription, event), one graphile-worker job per attempt
 * (`deliver_webhook` with `{ delivery_id, attempt }`, run at the time the schedule says: the
 * worker's own backoff cannot express the spec's delays), one attempt row per request sent.
 */

/** Retry jobs and manual retries carry this key, so a delete can drop them and a retry can move them. */
export const deliveryJobKey = (deliveryId: string) => `webhook_delivery:${deliveryId}`;
/** graphile-worker retries of a job that threw (database trouble), not of HTTP failures. */
const JOB_MAX_ATTEMPTS = 5;
/** Every attempt's job carries its subscription's flag (lib/subscription-gate.ts), so a full subscription's backlog can be skipped. */
export const SUBSCRIPTION_FLAG = 'webhook_subscription:';

/**
 * `fan_out_events`: a delivery per event and matching subscription (active, subscribed to the
 * type, existing when the event happened), and the first attempt of each queued now; one
 * statement for the whole batch. Idempotent: a rerun finds the deliveries and queues nothing.
 */
export async function fanOutEvents(db: Db, eventIds: string[]): Promise<number> {
  if (!eventIds.length) return 0;
  const [row] = await db<{ queued: number }[]>`
    WITH created AS (
      INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_attempt_at)
      SELECT s.id, e.id, e.type, now()
      FROM events e
      JOIN webhook_subscriptions s
        ON s.organization_id = e.organization_id AND s.active AND e.type = ANY(s.events) AND s.created_at <= e.created_at
      WHERE e.id = ANY(${eventIds}::uuid[])
      ON CONFLICT (subscription_id, event_id) DO NOTHING
      RETURNING id, subscription_id
    ), specs AS (
      SELECT array_agg(ROW('deliver_webhook', json_build_object('delivery_id', id, 'attempt', 1), NULL, NULL,
                           ${JOB_MAX_ATTEMPTS}, NULL, NULL, ARRAY[${SUBSCRIPTION_FLAG} || subscription_id::text])::graphile_worker.job_spec) AS specs
      FROM created
    )
    SELECT count(*)::int AS queued FROM (SELECT graphile_worker.add_jobs(specs) FROM specs WHERE specs IS NOT NULL) j`;
  return row!.queued;
}

type Target = {
  id: string;
  subscription_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  max_attempts: number;
  delivered: boolean;
  url: string;
  secrets: string[];
  event_id: string;
  event_type: string;
  event_created_at: Date;
  organization_id: string;
  data: unknown;
};

/** The exact bytes sent (and signed): the same on every attempt of the event. */
export const envelopeOf = (t: Pick<Target, 'event_id' | 'event_type' | 'event_created_at' | 'organization_id' | 'data'>): string =>
  JSON.stringify({ id: t.event_id, type: t.event_type, created_at: t.event_created_at.toISOString(), organization_id: t.organization_id, data: t.data });

export type AttemptOutcome = 'skipped' | 'deferred' | 'delivered' | 'retry' | 'final' | 'exhausted';

/**
 * One attempt: POST the envelope with both signatures (every valid secret, newest first), then
 * record the attempt and the delivery's new state, and queue the next attempt, in one
 * statement. Skips a job that no longer matches the delivery (already recorded, delivery
 * finished, or its subscription deleted).
 */
export async function deliverAttempt(
  sql: Sql,
  client: WebhookClient,
  retryDelays: number[],
  deliveryId: string,
  attempt: number,
  /** Opens the stored (sealed) secrets; a key that cannot fails the attempt before anything is sent. */
  secrets: SecretBox,
  /** Attempts in flight per subscription (worker.ts); an attempt over its subscription's cap is deferred. */
  gate?: Pick<SubscriptionGate, 'enter'>,
): Promise<AttemptOutcome> {
  const [target] = await sql<Target[]>`
    SELECT d.id, d.subscription_id, d.status, d.attempts, d.max_attempts, d.delivered_at IS NOT NULL AS delivered, s.url,
           array_remove(ARRAY[s.secret, CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END], NULL) AS secrets,
           e.id AS event_id, e.type AS event_type, e.created_at AS event_created_at, e.organization_id, e.data
    FROM webhook_deliveries d
    JOIN webhook_subscriptions s ON s.id = d.subscription_id
    JOIN events e ON e.id = d.event_id
    WHERE d.id = ${deliveryId}`;
  if (!target || target.status !== 'pending' || target.attempts !== attempt - 1) return 'skipped';
  const leave = gate ? gate.enter(target.subscription_id) : () => {};
  if (!leave) {
    await deferAttempt(sql, target.id, target.subscription_id, attempt);
    return 'deferred';
  }
  try {
    return await sendAttempt(sql, client, retryDelays, target, attempt, secrets);
  } finally {
    leave();
  }
}

async function sendAttempt(sql: Sql, client: WebhookClient, retryDelays: number[], target: Target, attempt: number, secrets: SecretBox): Promise<AttemptOutcome> {
  const body = envelopeOf(target);
  const attemptedAt = new Date();
  const headers = {
    ...signDelivery(body, target.event_id, Math.floor(attemptedAt.getTime() / 1000), target.secrets.map(secrets.open)),
    'Loyalty-Message-Id': target.event_id,
    'Loyalty-Event': target.event_type,
    'Loyalty-Attempt': String(attempt),
  };
  const result = await client.post(target.url, body, headers);
  const outcome = outcomeOf(result);
  const retry = outcome === 'retry' && attempt < target.max_attempts;
  const delivered = outcome === 'delivered';
  const status = retry ? 'pending' : delivered || target.delivered ? 'delivered' : 'failed';
  const delay = retry ? retryDelays[Math.min(attempt, retryDelays.length) - 1] ?? retryDelays.at(-1)! : null;
  await recordAttempt(sql, target.id, attempt, attemptedAt, result, { status, delivered, delay });
  return outcome === 'retry' && !retry ? 'exhausted' : outcome;
}

/**
 * The same attempt again in about a second: its subscription already has its share of attempts
 * in flight (a job fetched in a batch before the subscription filled up). Counts no attempt.
 */
async function deferAttempt(sql: Sql, deliveryId: string, subscriptionId: string, attempt: number) {
  await sql`
    SELECT graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', ${deliveryId}::uuid, 'attempt', ${attempt}::int),
             run_at => now() + make_interval(secs => 0.5 + random()), max_attempts => ${JOB_MAX_ATTEMPTS},
             job_key => ${deliveryJobKey(deliveryId)}, flags => ARRAY[${SUBSCRIPTION_FLAG + subscriptionId}])`;
}

async function recordAttempt(
  sql: Sql,
  deliveryId: string,
  attempt: number,
  attemptedAt: Date,
  result: PostResult,
  next: { status: string; delivered: boolean; delay: number | null },
) {
  await sql`
    WITH d AS (
      UPDATE webhook_deliveries SET
        attempts = ${attempt}, status = ${next.status}, updated_at = now(),
        next_attempt_at = now() + make_interval(secs => ${next.delay}::float8),
        delivered_at = CASE WHEN ${next.delivered} THEN coalesce(delivered_at, now()) ELSE delivered_at END
      WHERE id = ${deliveryId} AND attempts = ${attempt - 1} AND status = 'pending'
      RETURNING id, subscription_id, next_attempt_at
    ), logged AS (
      INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, response_snippet, attempted_at)
      SELECT id, ${attempt}, ${result.statusCode}, ${result.error}, ${result.durationMs}, ${result.snippet}, ${attemptedAt} FROM d
      ON CONFLICT DO NOTHING
    )
    SELECT graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', id, 'attempt', ${attempt + 1}::int),
             run_at => next_attempt_at, max_attempts => ${JOB_MAX_ATTEMPTS}, job_key => 'webhook_delivery:' || id::text,
             flags => ARRAY[${SUBSCRIPTION_FLAG} || subscription_id::text])
    FROM d WHERE next_attempt_at IS NOT NULL`;
}
