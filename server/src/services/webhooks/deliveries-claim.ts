import type { Db, Sql } from '../../db/pool.js';

/** A claimed delivery with what its attempt needs: the subscription's URL and secrets, the event. */
export type Target = {
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

/**
 * Up to `limit` of the subscription's due deliveries, oldest due first, leased to this lane for
 * `leaseSeconds` (past the last attempt it may start, LANE_SLICE_MS after the lane began, and
 * that attempt's timeout): one statement and one commit for the whole batch. Nothing when the
 * subscription is disabled or gone. Deliveries leased to other lanes are skipped, not waited for.
 */
export function claimDueDeliveries(
  sql: Sql,
  subscriptionId: string,
  limit: number,
  leaseSeconds: number,
): Promise<Target[]> {
  return sql<Target[]>`
    WITH claimed AS (${claimUpdate(sql, { subscriptionId, limit, leaseSeconds })})
    ${claimedTargets(sql)}`;
}

export type Claim = { subscriptionId: string; limit: number; leaseSeconds: number };

/**
 * The claim as a data-modifying CTE (`claimed`), for a statement that also records the previous
 * batch (deliveries-record.ts). Rows other parts of the statement update are claimed already in
 * its snapshot, so it never takes them.
 */
export const claimUpdate = (db: Db, c: Claim) => db`
  UPDATE webhook_deliveries d SET claimed_until = now() + make_interval(secs => ${c.leaseSeconds})
  WHERE d.id IN (
    SELECT id FROM webhook_deliveries
    WHERE subscription_id = ${c.subscriptionId} AND status = 'pending'
      AND next_attempt_at <= loyalty_now((SELECT organization_id FROM webhook_subscriptions WHERE id = ${c.subscriptionId}))
      AND (claimed_until IS NULL OR claimed_until < now())
      AND EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = ${c.subscriptionId} AND active)
    ORDER BY next_attempt_at LIMIT ${c.limit}
    FOR UPDATE SKIP LOCKED)
  RETURNING d.id, d.subscription_id, d.status, d.attempts, d.max_attempts, d.delivered_at, d.event_id, d.next_attempt_at`;

/** The rows of `claimed` with what their attempts need, in due order (`due_at`, then `id`). */
export const claimedTargets = (db: Db) => db`
  SELECT c.id, c.next_attempt_at AS due_at, c.subscription_id, c.status, c.attempts, c.max_attempts, c.delivered_at IS NOT NULL AS delivered, s.url,
         array_remove(ARRAY[s.secret, CASE WHEN s.previous_secret IS NULL THEN NULL WHEN s.previous_secret_expires_at > loyalty_now(s.organization_id) THEN s.previous_secret END], NULL) AS secrets,
         e.id AS event_id, e.type AS event_type, e.created_at AS event_created_at, e.organization_id, e.data
  FROM claimed c
  JOIN webhook_subscriptions s ON s.id = c.subscription_id
  JOIN events e ON e.id = c.event_id
  ORDER BY c.next_attempt_at, c.id`;
