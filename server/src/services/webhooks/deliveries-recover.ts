import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { wakeDeliveryLanes } from './deliveries.js';
import { invalidField } from '../platform/errors.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { requireSubscription } from './webhook-subscriptions.js';

/**
 * POST /webhook-subscriptions/{id}/recover: every delivery of the subscription that ended failed
 * in [since, until) is pending again with one more attempt, due now in event order (a microsecond
 * apart, the order lanes claim in), with its message id and body unchanged. One statement, so a
 * recovery is all or nothing. On a disabled subscription they wait (parked) until it is enabled.
 */
export async function recoverDeliveries(
  db: Db,
  scope: OrganizationScope,
  subscriptionId: string,
  input: Schemas['RecoverWebhookDeliveriesRequest'],
  lanes: number,
): Promise<Schemas['WebhookDeliveriesRecovered']['data']> {
  const subscription = await requireSubscription(db, scope, subscriptionId, { lock: true });
  const since = new Date(input.since);
  const until = input.until === undefined ? new Date() : new Date(input.until);
  if (!(since < until)) throw invalidField('until', 'The until field must be a time after since.');
  const rows = await db<{ recovered: number }[]>`
    WITH failed AS (
      SELECT d.id, row_number() OVER (ORDER BY e.created_at, e.seq) AS n
      FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.subscription_id = ${subscriptionId} AND d.status = 'failed'
        AND d.updated_at >= ${since} AND d.updated_at < ${until}
    ), requeued AS (
      UPDATE webhook_deliveries d SET
        status = 'pending', max_attempts = d.attempts + 1, requeued_by = 'recover', updated_at = now(),
        next_attempt_at = loyalty_now(${subscription.organization_id}::text) + make_interval(secs => failed.n / 1e6)
      FROM failed WHERE d.id = failed.id
      RETURNING 1
    )
    SELECT count(*)::int AS recovered FROM requeued`;
  const { recovered } = firstRow(rows, 'the count of recovered deliveries');
  if (recovered > 0) await wakeDeliveryLanes(db, [subscriptionId], lanes);
  return {
    id: subscriptionId,
    recovered,
    since: since.toISOString(),
    until: until.toISOString(),
    active: subscription.active,
  };
}
