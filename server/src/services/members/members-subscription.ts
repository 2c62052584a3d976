import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { DomainError, notFound } from '../platform/errors.js';
import { requireBrand } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

/**
 * Marketing subscription of a member per brand (the spec's state table). Subscribing a member
 * who is subscribed already is a 400; unsubscribing one who is unsubscribed already is a no-op
 * (the spec names no error for it).
 */
export async function setSubscription(
  tx: Db,
  scope: OrganizationScope,
  input: Schemas['SubscriptionRequest'],
  subscribe: boolean,
): Promise<string> {
  const brand = await requireBrand(tx, scope, input.brand_id);
  const [row] = await tx<{ member_id: string; was_unsubscribed: boolean }[]>`
    SELECT bm.member_id, bm.unsubscribed AS was_unsubscribed
    FROM brand_members bm JOIN members m ON m.id = bm.member_id
    WHERE bm.brand_id = ${brand.id} AND m.organization_id = ${brand.organizationId} AND lower(m.email) = lower(${input.email})
    FOR UPDATE OF bm`;
  if (!row) throw notFound('Member');
  if (subscribe && !row.was_unsubscribed) {
    throw new DomainError('bad_request', 'already_subscribed', 'The member is already subscribed.');
  }
  if (row.was_unsubscribed === subscribe) {
    await tx`UPDATE brand_members SET unsubscribed = ${!subscribe} WHERE brand_id = ${brand.id} AND member_id = ${row.member_id}`;
  }
  return subscribe ? 'User subscribed' : 'User unsubscribed';
}

/**
 * Bulk (un)subscribe by e-mail: only members whose state changes are counted. 404 when the brand
 * is unknown; for subscribe also when none of the e-mails is a member of the brand (an unsubscribe
 * never fails for unknown addresses: openapi.yaml).
 */
export async function setSubscriptionBulk(
  tx: Db,
  scope: OrganizationScope,
  input: Schemas['BulkSubscriptionRequest'],
  subscribe: boolean,
): Promise<{ amount: number; message: string }> {
  const brand = await requireBrand(tx, scope, input.brand_id);
  const emails = [...new Set(input.email.map((e) => e.toLowerCase()))];
  const rows = await tx<{ matched: number; changed: number }[]>`
    WITH matched AS (
      -- Locked in member order, so two bulk calls over the same members wait instead of deadlocking.
      SELECT bm.member_id
      FROM members m JOIN brand_members bm ON bm.member_id = m.id AND bm.brand_id = ${brand.id}
      WHERE m.organization_id = ${brand.organizationId} AND lower(m.email) = ANY(${emails}::text[])
      ORDER BY bm.member_id
      FOR UPDATE OF bm
    ), changed AS (
      UPDATE brand_members bm SET unsubscribed = ${!subscribe}
      FROM matched WHERE bm.brand_id = ${brand.id} AND bm.member_id = matched.member_id AND bm.unsubscribed = ${subscribe}
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM matched)::int AS matched, (SELECT count(*) FROM changed)::int AS changed`;
  const counts = firstRow(rows, 'the counts of matched and changed members');
  if (subscribe && !counts.matched) throw notFound('Member');
  const amount = counts.changed;
  return { amount, message: `${subscribe ? 'Subscribed' : 'Unsubscribed'} ${amount} members` };
}
