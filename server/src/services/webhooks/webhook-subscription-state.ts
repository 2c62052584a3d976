import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { wakeDeliveryLanes } from './deliveries.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { disableSubscription } from './subscription-disable.js';
import { filterToColumns } from './subscription-filter.js';
import {
  presentSubscription,
  requireSubscription,
  subscriptionColumns,
  type SubscriptionRow,
} from './webhook-subscriptions.js';

/**
 * PATCH /webhook-subscriptions/{id}. The URL has been checked by the caller (DNS, outside the
 * transaction). A `filter` replaces the stored one whole (null clears it). Enabling clears the reason and the failure counters and wakes the lanes, so
 * parked deliveries are sent (those already due at once).
 */
export async function updateSubscription(
  db: Db,
  scope: OrganizationScope,
  id: string,
  input: Schemas['UpdateWebhookSubscriptionRequest'],
  lanes: number,
): Promise<Schemas['WebhookSubscription']> {
  const current = await requireSubscription(db, scope, id, { lock: true });
  const filter =
    input.filter === undefined ? current : await filterToColumns(db, current.organization_id, input.filter);
  await db`
    UPDATE webhook_subscriptions SET
      url = ${input.url ?? current.url},
      events = ${input.events ? [...new Set(input.events)] : current.events},
      description = ${input.description === undefined ? current.description : input.description},
      filter_brand_ids = ${filter.filter_brand_ids}, filter_points_min = ${filter.filter_points_min},
      filter_points_types = ${filter.filter_points_types}
    WHERE id = ${id}`;
  if (input.active === false) await disableSubscription(db, id, 'manual');
  if (input.active === true && !current.active) {
    await db`
      UPDATE webhook_subscriptions
      SET active = true, disabled_reason = NULL, disabled_at = NULL, failing_since = NULL, consecutive_failures = 0,
          failing_warned_at = NULL
      WHERE id = ${id}`;
    await wakeDeliveryLanes(db, [id], lanes);
  }
  const rows = await db<
    SubscriptionRow[]
  >`SELECT ${subscriptionColumns(db)} FROM webhook_subscriptions WHERE id = ${id}`;
  return presentSubscription(firstRow(rows, 'the updated subscription'));
}
