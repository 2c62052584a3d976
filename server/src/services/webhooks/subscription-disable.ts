import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { recordEvent } from './events.js';

/**
 * Disables an active subscription (in the caller's transaction): no new deliveries are created
 * for it (fan-out takes active subscriptions only) and its pending ones are parked (lanes claim
 * nothing of an inactive subscription). The organization's other subscriptions of
 * `webhook_subscription.disabled` hear of it. Returns false when it was disabled already.
 */
export async function disableSubscription(
  db: Db,
  id: string,
  reason: Schemas['WebhookDisabledReason'],
): Promise<boolean> {
  const [row] = await db<{ organization_id: string; disabled_at: Date }[]>`
    UPDATE webhook_subscriptions SET active = false, disabled_reason = ${reason}, disabled_at = now()
    WHERE id = ${id} AND active
    RETURNING organization_id, disabled_at`;
  if (!row) return false;
  await recordEvent(db, {
    organizationId: row.organization_id,
    type: 'webhook_subscription.disabled',
    data: { subscription_id: id, reason, disabled_at: row.disabled_at.toISOString() },
  });
  return true;
}
