import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { notAboutItself, wakeDeliveryLanes } from './deliveries.js';
import { invalidField } from '../platform/errors.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { passesFilter } from './subscription-filter.js';
import { requireSubscription } from './webhook-subscriptions.js';

/**
 * POST /webhook-subscriptions/{id}/replay-missing: a delivery for every event of the
 * subscription's organization recorded in [since, until) that the subscription matches now (its
 * types and filter: the fan-out's rule, subscription-filter.ts) and has no delivery of, due now in
 * event order (a microsecond apart, the order lanes claim in). One INSERT … ON CONFLICT DO NOTHING
 * on the (subscription, event) key: a second or concurrent replay of the window, or a fan-out
 * meanwhile, creates nothing twice. Events with a delivery, whatever its status, are left alone.
 * `retentionDays` bounds `since` (older events are purged).
 */
export async function replayMissingEvents(
  db: Db,
  scope: OrganizationScope,
  subscriptionId: string,
  input: Schemas['ReplayMissingEventsRequest'],
  { lanes, retentionDays, now = new Date() }: { lanes: number; retentionDays: number; now?: Date },
): Promise<Schemas['ReplayMissingEventsResponse']['data']> {
  const subscription = await requireSubscription(db, scope, subscriptionId);
  const since = new Date(input.since);
  const until = input.until === undefined ? now : new Date(input.until);
  const horizon = new Date(now.getTime() - retentionDays * 86_400_000);
  if (since < horizon)
    throw invalidField(
      'since',
      `The since field may not be before ${horizon.toISOString()}: events are kept ${retentionDays} days (LOYALTY_RETENTION_DAYS).`,
    );
  if (until < since) throw invalidField('until', 'The until field must not be before since.');
  const rows = await db<{ replayed: number }[]>`
    WITH missed AS (
      SELECT e.id, e.type, row_number() OVER (ORDER BY e.created_at, e.seq) AS n
      FROM events e JOIN webhook_subscriptions s ON s.id = ${subscriptionId}
      WHERE e.organization_id = ${subscription.organization_id}
        AND e.created_at >= ${since} AND e.created_at < ${until}
        AND e.type = ANY(s.events) AND ${passesFilter(db)} AND ${notAboutItself(db)}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id AND d.event_id = e.id)
    ), created AS (
      INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_attempt_at, requeued_by)
      SELECT ${subscriptionId}, m.id, m.type,
             loyalty_now(${subscription.organization_id}::text) + make_interval(secs => m.n / 1e6), 'replay'
      FROM missed m ORDER BY m.n
      ON CONFLICT (subscription_id, event_id) DO NOTHING
      RETURNING 1
    )
    SELECT count(*)::int AS replayed FROM created`;
  const { replayed } = firstRow(rows, 'the count of replayed events');
  if (replayed > 0) await wakeDeliveryLanes(db, [subscriptionId], lanes);
  return {
    id: subscriptionId,
    replayed,
    since: since.toISOString(),
    until: until.toISOString(),
    active: subscription.active,
  };
}
