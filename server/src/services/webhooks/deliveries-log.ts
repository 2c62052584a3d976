import type { Db } from '../../db/pool.js';
import { defined, firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { wakeDeliveryLanes } from './deliveries.js';
import { invalidField, notFound } from '../platform/errors.js';
import { isUuid } from '../platform/members-scope.js';
import { requireSubscription, type SubscriptionRow } from './webhook-subscriptions.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

type DeliveryRow = {
  id: string;
  seq: number;
  event_id: string;
  event_type: Schemas['EventType'];
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  attempt_log: Schemas['WebhookDeliveryAttempt'][];
  requeued_by: 'retry' | 'recover' | 'replay' | 'resend' | null;
};

/** What the log says of the subscription's state (read once with the subscription, not per delivery). */
type SubscriptionState = Pick<SubscriptionRow, 'active' | 'disabled_reason'>;

/** The columns of a Delivery, its attempts folded in as JSON (one query per page). */
const deliveryColumns = (db: Db) => db`
  d.id, d.seq, d.event_id, d.event_type, d.status, d.attempts, d.next_attempt_at, d.created_at, d.requeued_by,
  coalesce((
    SELECT json_agg(json_build_object(
      'attempt', a.attempt, 'status_code', a.status_code, 'error', a.error, 'duration_ms', a.duration_ms,
      'response_snippet', a.response_snippet, 'request_id', d.id::text || '.' || a.attempt, -- attemptRequestId
      'attempted_at', to_char(a.attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY a.attempt)
    FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempt_log`;

const presentDelivery = (d: DeliveryRow, subscription: SubscriptionState): Schemas['WebhookDelivery'] => ({
  id: d.id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempt_log,
  next_attempt_at: d.status === 'pending' && d.next_attempt_at ? d.next_attempt_at.toISOString() : null,
  next_attempt_reason: d.status === 'pending' ? nextAttemptReason(d, subscription) : null,
  created_at: d.created_at.toISOString(),
});

/** Why a pending delivery's next attempt is due when it is, in words (next_attempt_reason). */
export function nextAttemptReason(
  d: Pick<DeliveryRow, 'attempt_log' | 'requeued_by'>,
  subscription: SubscriptionState,
): string {
  if (!subscription.active)
    return `Parked: the subscription is disabled (${subscription.disabled_reason ?? 'manual'}); enable it to send.`;
  if (d.requeued_by === 'retry') return 'Retry requested (POST …/retry).';
  if (d.requeued_by === 'recover') return 'Recovered after failing (POST …/recover).';
  if (d.requeued_by === 'replay') return 'Replayed: the subscription had missed this event (POST …/replay-missing).';
  if (d.requeued_by === 'resend') return 'Resend requested (POST /events/{id}/resend).';
  const last = d.attempt_log.at(-1);
  if (!last) return 'First attempt.';
  const answer =
    last.status_code === null
      ? `no response (${last.error ?? 'error'})`
      : last.error === 'redirect_not_followed'
        ? `HTTP ${last.status_code} redirect, not followed`
        : `HTTP ${last.status_code}`;
  return `Attempt ${last.attempt} got ${answer}; retry ${last.attempt} of 7 on the schedule.`;
}

/** GET /webhook-subscriptions/{id}/deliveries: newest first, keyset-paged on the delivery's seq. */
export async function listDeliveries(
  db: Db,
  scope: OrganizationScope,
  subscriptionId: string,
  query: { status?: 'pending' | 'delivered' | 'failed'; limit?: number; after?: string },
) {
  const subscription = await requireSubscription(db, scope, subscriptionId);
  const limit = query.limit ?? 20;
  if (query.after !== undefined && !/^\d{1,18}$/.test(query.after))
    throw invalidField('after', 'The after field is not a cursor of this list.');
  const rows = await db<DeliveryRow[]>`
    SELECT ${deliveryColumns(db)}
    FROM webhook_deliveries d
    WHERE d.subscription_id = ${subscriptionId}
      ${query.status ? db`AND d.status = ${query.status}` : db``}
      ${query.after !== undefined ? db`AND d.seq < ${query.after}::bigint` : db``}
    ORDER BY d.seq DESC
    LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  return {
    data: page.map((d) => presentDelivery(d, subscription)),
    next_cursor: rows.length > limit ? String(defined(page.at(-1), 'the last delivery of the page').seq) : null,
  };
}

/**
 * POST /webhook-subscriptions/{id}/deliveries/{delivery_id}/retry: an attempt now. A pending
 * delivery's next attempt moves to now (same attempt number, the rest of the schedule stays); a
 * finished delivery gets exactly one more attempt (numbered on from the last one).
 */
export async function retryDelivery(
  db: Db,
  scope: OrganizationScope,
  subscriptionId: string,
  deliveryId: string,
  lanes: number,
) {
  const subscription = await requireSubscription(db, scope, subscriptionId);
  if (!isUuid(deliveryId)) throw notFound('Delivery');
  const [current] = await db<{ status: string; attempts: number }[]>`
    SELECT status, attempts FROM webhook_deliveries WHERE id = ${deliveryId} AND subscription_id = ${subscriptionId} FOR UPDATE`;
  if (!current) throw notFound('Delivery');
  await db`
    UPDATE webhook_deliveries SET
      status = 'pending', next_attempt_at = loyalty_now(${subscription.organization_id}::text), updated_at = now(), requeued_by = 'retry',
      max_attempts = ${current.status === 'pending' ? db`max_attempts` : db`attempts + 1`}
    WHERE id = ${deliveryId}`;
  await wakeDeliveryLanes(db, [subscriptionId], lanes);
  const rows = await db<
    DeliveryRow[]
  >`SELECT ${deliveryColumns(db)} FROM webhook_deliveries d WHERE d.id = ${deliveryId}`;
  return presentDelivery(firstRow(rows, 'the retried delivery'), subscription);
}

/** One delivery as the log shows it (POST /events/{id}/resend answers it). */
export async function presentDeliveryById(db: Db, deliveryId: string, subscription: SubscriptionState) {
  const rows = await db<
    DeliveryRow[]
  >`SELECT ${deliveryColumns(db)} FROM webhook_deliveries d WHERE d.id = ${deliveryId}`;
  return presentDelivery(firstRow(rows, 'the delivery'), subscription);
}
