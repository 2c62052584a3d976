import type { Db, Sql } from '../../db/pool.js';
import { defined } from '../../lib/defined.js';
import { outcomeOf, type PostResult } from '../../lib/safe-fetch.js';
import type { Schemas } from '../../lib/schemas.js';
import { claimedTargets, claimUpdate, type Claim, type Target } from './deliveries-claim.js';
import { recordWarnings, type Warning } from './delivery-warnings.js';
import { disableSubscription } from './subscription-disable.js';
import {
  countFailure,
  disableReason,
  resetFailures,
  type HealthRules,
  type SubscriptionHealth,
} from './subscription-health.js';

export type AttemptOutcome = 'delivered' | 'retry' | 'final' | 'exhausted';

/** An attempt that was sent (or refused before sending by the address rule), not yet recorded. */
export type SentAttempt = { target: Target; attempt: number; attemptedAt: Date; result: PostResult };

/** What recording an attempt decided: its outcome for the log, the warnings it raised, and the reason when it disabled the subscription. */
export type RecordedAttempt = {
  outcome: AttemptOutcome;
  disabled?: Schemas['WebhookDisabledReason'];
  /** The warning events this attempt raised (delivery-warnings.ts). */
  warnings?: Warning[];
};

type RecordContext = { sql: Sql; retryDelays: number[]; healthRules?: HealthRules };

/**
 * Records a lane's batch (deliveries-claim.ts): its attempts, in the order they were sent, and
 * gives back the claims it did not send (`unsent`, due again at once for any lane). The attempts
 * that delivered are recorded together in one statement, with the subscription's failure counters
 * reset; a failed attempt (the lane ends a batch at its first failure, so it comes last) is then
 * recorded on its own, counted and maybe disabling the subscription (subscription-health.ts), in
 * the same transaction. One commit per batch either way, with `then` (the lane queued again) in it.
 */
export async function recordBatch(
  ctx: RecordContext,
  sent: SentAttempt[],
  unsent: Target[],
  then?: (tx: Db) => Promise<unknown>,
): Promise<RecordedAttempt[]> {
  const firstFailure = sent.findIndex((s) => outcomeOf(s.result) !== 'delivered');
  const delivered = firstFailure < 0 ? sent : sent.slice(0, firstFailure);
  const failed = firstFailure < 0 ? [] : sent.slice(firstFailure);
  const recorded: RecordedAttempt[] = delivered.map(() => ({ outcome: 'delivered' }));
  if (!failed.length && !then) {
    if (delivered.length || unsent.length) await recordAndClaim(ctx.sql, delivered, unsent);
    return recorded;
  }
  return ctx.sql.begin(async (tx) => {
    if (delivered.length || unsent.length) await recordAndClaim(tx, delivered, unsent);
    // in the order sent: the health rules count failures in a row
    for (const attempt of failed) recorded.push(await recordFailure(tx, ctx, attempt));
    await then?.(tx);
    return recorded;
  });
}

/**
 * Attempts that were answered 2xx (`delivered`), the unsent claims given back, and the next batch
 * claimed (`claim`; none without), in one statement and one commit: a lane sends a batch while
 * this statement records the one before it and claims the one after (runDeliveryLane). `active`
 * says whether the claim's subscription was active (and there) as the statement began: a lane
 * stops sending once it is not.
 */
export async function recordAndClaim(
  db: Db,
  delivered: SentAttempt[],
  unsent: Target[],
  claim?: Claim,
): Promise<{ targets: Target[]; active: boolean }> {
  const claimed = claim ?? { subscriptionId: NO_SUBSCRIPTION, limit: 0, leaseSeconds: 0 };
  const rows = await db<(Target & { subscription_active: boolean })[]>`
    WITH v AS (
      SELECT * FROM unnest(
        ${delivered.map((s) => s.target.id)}::uuid[], ${delivered.map((s) => s.attempt)}::int[],
        ${delivered.map((s) => s.result.statusCode)}::int[], ${delivered.map((s) => s.result.durationMs)}::int[],
        ${delivered.map((s) => s.result.snippet)}::text[], ${delivered.map((s) => s.attemptedAt.toISOString())}::timestamptz[]
      ) AS v(id, attempt, status_code, duration_ms, snippet, attempted_at)
    ), d AS (
      UPDATE webhook_deliveries w SET
        attempts = v.attempt, status = 'delivered', updated_at = now(), claimed_until = NULL, requeued_by = NULL,
        next_attempt_at = NULL, delivered_at = coalesce(w.delivered_at, now())
      FROM v WHERE w.id = v.id AND w.attempts = v.attempt - 1 AND w.status = 'pending'
      RETURNING w.id, w.subscription_id
    ), a AS (
      INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, response_snippet, attempted_at)
      SELECT v.id, v.attempt, v.status_code, NULL, v.duration_ms, v.snippet, v.attempted_at FROM d JOIN v ON v.id = d.id
      ON CONFLICT DO NOTHING
    ), released AS (
      UPDATE webhook_deliveries SET claimed_until = NULL
      WHERE id = ANY(${unsent.map((t) => t.id)}::uuid[]) AND status = 'pending'
    ), reset AS (
      ${resetFailures(db)}
    ), claimed AS (
      ${claimUpdate(db, claimed)}
    )
    SELECT s.active AS subscription_active, t.*
    FROM webhook_subscriptions s LEFT JOIN LATERAL (${claimedTargets(db)}) t ON true
    WHERE s.id = ${claimed.subscriptionId}
    ORDER BY t.due_at, t.id`;
  return { targets: rows.filter((r) => r.id !== null), active: rows[0]?.subscription_active ?? false };
}

/** No subscription has it: the claim of a statement that only records. */
const NO_SUBSCRIPTION = '00000000-0000-0000-0000-000000000000';

/**
 * One attempt that did not deliver: the attempt and the delivery's new state (a retry on the
 * schedule, or failed) in one statement with the subscription's failure count; the warnings it
 * raises (delivery-warnings.ts) are recorded, and the subscription is disabled when the health
 * rules say so.
 */
async function recordFailure(db: Db, ctx: RecordContext, s: SentAttempt): Promise<RecordedAttempt> {
  const { target, attempt, attemptedAt, result } = s;
  const outcome = outcomeOf(result);
  const retry = outcome === 'retry' && attempt < target.max_attempts;
  const status = retry ? 'pending' : target.delivered ? 'delivered' : 'failed';
  const delay = retry
    ? (ctx.retryDelays[Math.min(attempt, ctx.retryDelays.length) - 1] ??
      defined(ctx.retryDelays.at(-1), 'the last retry delay'))
    : null;
  const [health] = await db<SubscriptionHealth[]>`
    WITH d AS (
      UPDATE webhook_deliveries SET
        attempts = ${attempt}, status = ${status}, updated_at = now(), claimed_until = NULL, requeued_by = NULL,
        next_attempt_at = loyalty_now(${target.organization_id}::text) + make_interval(secs => ${delay}::float8)
      WHERE id = ${target.id} AND attempts = ${attempt - 1} AND status = 'pending'
      RETURNING id, subscription_id
    ), a AS (
      INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, response_snippet, attempted_at)
      SELECT id, ${attempt}, ${result.statusCode}, ${result.error}, ${result.durationMs}, ${result.snippet}, ${attemptedAt} FROM d
      ON CONFLICT DO NOTHING
    )
    ${countFailure(db, attemptedAt, status === 'failed')}`;
  const reason = health && disableReason(health, result.statusCode, attemptedAt, ctx.healthRules);
  const warnings = await recordWarnings(db, {
    target,
    attempt,
    result,
    status,
    health,
    rules: ctx.healthRules,
    attemptedAt,
    disabling: Boolean(reason),
  });
  const disabled = reason && (await disableSubscription(db, target.subscription_id, reason)) ? reason : undefined;
  const final = outcome === 'retry' && !retry ? 'exhausted' : outcome;
  return { outcome: final, ...(disabled ? { disabled } : {}), ...(warnings.length ? { warnings } : {}) };
}
