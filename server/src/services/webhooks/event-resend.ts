import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { wakeDeliveryLanes } from './deliveries.js';
import { presentDeliveryById } from './deliveries-log.js';
import { notFound } from '../platform/errors.js';
import { isUuid } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { requireSubscription } from './webhook-subscriptions.js';

/**
 * POST /events/{id}/resend: the event delivered to the subscription again, now, whatever its type
 * and the subscription's filter. The delivery log keeps one row per (subscription, event): a new
 * delivery when there is none, else that delivery pending again with one more attempt (as a
 * manual retry). Unknown and foreign events and subscriptions, a subscription of another
 * organization than the event's, and a disabled subscription all answer 404.
 */
export async function resendEvent(
  db: Db,
  scope: OrganizationScope,
  eventId: string,
  input: Schemas['ResendEventRequest'],
  lanes: number,
): Promise<Schemas['WebhookDelivery']> {
  if (!isUuid(eventId)) throw notFound('Event');
  const [event] = await db<{ id: string; type: string; organization_id: string }[]>`
    SELECT id, type, organization_id FROM events WHERE id = ${eventId} AND organization_id = ANY(${scope.organizationIds})`;
  if (!event) throw notFound('Event');
  const subscription = await requireSubscription(db, scope, input.subscription_id, { lock: true });
  if (subscription.organization_id !== event.organization_id || !subscription.active)
    throw notFound('Enabled subscription of the event’s organization');
  const rows = await db<{ id: string }[]>`
    INSERT INTO webhook_deliveries AS d (subscription_id, event_id, event_type, next_attempt_at, requeued_by)
    VALUES (${subscription.id}, ${event.id}, ${event.type}, loyalty_now(${event.organization_id}::text), 'resend')
    ON CONFLICT (subscription_id, event_id) DO UPDATE SET
      status = 'pending', next_attempt_at = excluded.next_attempt_at, updated_at = now(), requeued_by = 'resend',
      max_attempts = CASE WHEN d.status = 'pending' THEN d.max_attempts ELSE d.attempts + 1 END
    RETURNING id`;
  await wakeDeliveryLanes(db, [subscription.id], lanes);
  return presentDeliveryById(db, firstRow(rows, 'the resent delivery').id, subscription);
}
