import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';

/**
 * When a failing subscription is disabled (issue 15, after Svix and the Standard Webhooks spec):
 * a `410 Gone` disables it at once; otherwise when every attempt has failed for `failingSeconds`
 * (from the first failed attempt after the last success) or `consecutiveFailures` deliveries in a
 * row ended failed. 0 turns a rule off. The retry schedule itself stays the specification's.
 */
export type HealthRules = {
  failingSeconds: number;
  consecutiveFailures: number;
  /**
   * The warning (`webhook_subscription.failing`) at this many deliveries in a row ended failed, or
   * once the streak has lasted a tenth of `failingSeconds`, whichever comes first; 0: none.
   */
  failingAfter?: number;
};

/** 5 days, or 100 deliveries in a row (LOYALTY_WEBHOOK_DISABLE_AFTER_SECONDS / _FAILURES); the warning at 10. */
export const DEFAULT_HEALTH_RULES: HealthRules = {
  failingSeconds: 5 * 24 * 3600,
  consecutiveFailures: 100,
  failingAfter: 10,
};

/** The subscription's counters after a failed attempt was counted. */
export type SubscriptionHealth = {
  organization_id: string;
  url: string;
  active: boolean;
  failing_since: Date;
  consecutive_failures: number;
  /** When this streak was warned of (migration 0049); null until then. */
  failing_warned_at: Date | null;
};

/**
 * The end of the statement that recorded successful attempts (its delivery update is `d`, one row
 * or a batch's): the subscription's failure counters start over; no write when they are clear
 * (the usual case).
 */
export const resetFailures = (db: Db) => db`
  UPDATE webhook_subscriptions SET failing_since = NULL, consecutive_failures = 0, failing_warned_at = NULL
  WHERE id IN (SELECT subscription_id FROM d) AND (failing_since IS NOT NULL OR consecutive_failures > 0)`;

/**
 * The end of the statement that recorded a failed attempt (`d`): failing since this attempt unless
 * already failing, one more failed delivery in a row when this attempt ended it. Returns the
 * counters (no row when the attempt was recorded by someone else already).
 */
export const countFailure = (db: Db, attemptedAt: Date, deliveryFailed: boolean) => db`
  UPDATE webhook_subscriptions SET
    failing_since = coalesce(failing_since, ${attemptedAt}),
    consecutive_failures = consecutive_failures + ${deliveryFailed ? 1 : 0}
  WHERE id = (SELECT subscription_id FROM d)
  RETURNING organization_id, url, active, failing_since, consecutive_failures, failing_warned_at`;

/** Why the subscription is to be disabled after this failed attempt, if it is. */
export function disableReason(
  health: SubscriptionHealth,
  statusCode: number | null,
  attemptedAt: Date,
  rules: HealthRules = DEFAULT_HEALTH_RULES,
): Schemas['WebhookDisabledReason'] | undefined {
  if (!health.active) return undefined;
  if (statusCode === 410) return 'endpoint_gone';
  if (rules.failingSeconds > 0 && attemptedAt.getTime() - health.failing_since.getTime() >= rules.failingSeconds * 1000)
    return 'failing_too_long';
  if (rules.consecutiveFailures > 0 && health.consecutive_failures >= rules.consecutiveFailures)
    return 'too_many_failures';
  return undefined;
}

/**
 * Whether this failed attempt makes the subscription failing: its streak was not warned of yet,
 * and the deliveries in a row that ended failed reached the warning's threshold, or the streak
 * has lasted a tenth of the time that disables it (a quiet subscription may never reach the
 * count first). Not when this attempt disables it (`webhook_subscription.disabled` says more).
 * The counters were read under the subscription's row lock (countFailure), held until the commit
 * that records the warning (markWarned), so one recorder in a streak warns, whatever the number
 * of lanes and workers; a success or enabling it starts the streak over (resetFailures).
 */
export function becameFailing(
  health: SubscriptionHealth,
  attemptedAt: Date,
  disabling: boolean,
  rules: HealthRules = DEFAULT_HEALTH_RULES,
): boolean {
  const threshold = rules.failingAfter ?? 0;
  if (!health.active || disabling || threshold <= 0 || health.failing_warned_at) return false;
  const lasted = attemptedAt.getTime() - health.failing_since.getTime();
  return (
    health.consecutive_failures >= threshold ||
    (rules.failingSeconds > 0 && lasted >= (rules.failingSeconds * 1000) / 10)
  );
}

/** The streak is warned of (in the transaction of the attempt that raised the warning). */
export const markWarned = (db: Db, subscriptionId: string, attemptedAt: Date) =>
  db`UPDATE webhook_subscriptions SET failing_warned_at = ${attemptedAt} WHERE id = ${subscriptionId}`;
