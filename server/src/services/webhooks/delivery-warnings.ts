import type { Db } from '../../db/pool.js';
import type { PostResult } from '../../lib/safe-fetch.js';
import type { Schemas } from '../../lib/schemas.js';
import type { Target } from './deliveries-claim.js';
import { recordEvents, type NewEvent } from './events.js';
import { becameFailing, type HealthRules, markWarned, type SubscriptionHealth } from './subscription-health.js';

/**
 * The warnings a failed delivery raises (issue 29, after Svix's `message.attempt.failing` and
 * `message.attempt.exhausted`): `webhook_subscription.failing` once per failing streak, when the
 * subscription's failed deliveries in a row reach the warning's threshold or the streak has
 * lasted a tenth of the disable time (before the automatic disable), and
 * `webhook_delivery.exhausted` when the delivery used its last attempt. Recorded through the
 * outbox in the transaction that records the attempt, so each exists exactly when that attempt's
 * record committed, and once: the record is conditional on the delivery's previous state
 * (deliveries-record.ts), so only one lane ever records a given attempt.
 *
 * Loops are cut twice: fan-out never gives a subscription an event about itself (SELF_EVENT_TYPES,
 * deliveries.ts), and a delivery of one of these events that exhausts raises no exhausted event.
 */

/** Event types about a subscription (`data.subscription_id`): never delivered to that subscription. */
export const SELF_EVENT_TYPES = [
  'webhook_subscription.disabled',
  'webhook_subscription.failing',
  'webhook_delivery.exhausted',
] as const satisfies readonly Schemas['EventType'][];

const isLifecycleEvent = (type: string) => (SELF_EVENT_TYPES as readonly string[]).includes(type);

/** The URL as an identifier: no query string, fragment or user info (where tokens hide). */
export function urlIdentifier(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '';
  }
}

export type FailedDelivery = {
  target: Target;
  attempt: number;
  result: PostResult;
  /** The delivery's status as recorded: only `failed` ends it. */
  status: 'pending' | 'delivered' | 'failed';
  /** The subscription's counters after this attempt (none: someone else recorded it). */
  health: SubscriptionHealth | undefined;
  rules: HealthRules | undefined;
  attemptedAt: Date;
  /** This attempt disables the subscription (its own event says so: no warning besides). */
  disabling: boolean;
};

/** The warning events of one failed attempt, in the order they happened. */
export function warningsOf(f: FailedDelivery): NewEvent[] {
  const { target, attempt, result, health } = f;
  if (!health) return [];
  const failed = f.status === 'failed';
  const events: NewEvent[] = [];
  if (failed && attempt >= target.max_attempts && !isLifecycleEvent(target.event_type))
    events.push({
      organizationId: health.organization_id,
      type: 'webhook_delivery.exhausted',
      data: {
        delivery_id: target.id,
        subscription_id: target.subscription_id,
        event_id: target.event_id,
        event_type: target.event_type as Schemas['EventType'],
        attempts: attempt,
        last_status: result.statusCode,
        last_error: result.error,
      } satisfies Schemas['WebhookDeliveryExhaustedEvent']['data'],
    });
  if (becameFailing(health, f.attemptedAt, f.disabling, f.rules))
    events.push({
      organizationId: health.organization_id,
      type: 'webhook_subscription.failing',
      data: {
        subscription_id: target.subscription_id,
        url: urlIdentifier(health.url),
        consecutive_failures: health.consecutive_failures,
        disable_after: (f.rules?.consecutiveFailures ?? 0) > 0 ? (f.rules?.consecutiveFailures ?? null) : null,
        last_status: result.statusCode,
        last_error: result.error,
        first_failure_at: health.failing_since.toISOString(),
      } satisfies Schemas['WebhookSubscriptionFailingEvent']['data'],
    });
  return events;
}

/** Records the warnings of a failed attempt in the caller's transaction (the outbox's door); their types. */
export async function recordWarnings(db: Db, f: FailedDelivery): Promise<Warning[]> {
  const events = warningsOf(f);
  if (events.some((e) => e.type === 'webhook_subscription.failing'))
    await markWarned(db, f.target.subscription_id, f.attemptedAt);
  await recordEvents(db, events);
  return events.map((e) => e.type as Warning);
}

export type Warning = 'webhook_delivery.exhausted' | 'webhook_subscription.failing';
