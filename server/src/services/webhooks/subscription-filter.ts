import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalidField } from '../platform/errors.js';

export type SubscriptionFilter = Schemas['WebhookSubscriptionFilter'];

/** The filter columns of a subscription row (migration 0045); NULL: no filter on that attribute. */
export type FilterColumns = {
  filter_brand_ids: string[] | null;
  filter_points_min: number | null;
  filter_points_types: NonNullable<SubscriptionFilter['points_types']> | null;
};

export const filterColumns = (db: Db) => db`filter_brand_ids, filter_points_min, filter_points_types`;

/** The subscription resource's `filter`: null when nothing is filtered, else only the attributes set. */
export function presentFilter(row: FilterColumns): SubscriptionFilter | null {
  const filter: SubscriptionFilter = {};
  if (row.filter_brand_ids !== null) filter.brand_ids = row.filter_brand_ids;
  if (row.filter_points_min !== null) filter.points_min = row.filter_points_min;
  if (row.filter_points_types !== null) filter.points_types = row.filter_points_types;
  return Object.keys(filter).length ? filter : null;
}

/**
 * The columns a `filter` of a create or PATCH stores: its brands must be brands of the
 * subscription's organization (422 naming `filter.brand_ids` otherwise: a foreign brand is as
 * unknown as one that does not exist). `null` (or `{}`) clears every attribute.
 */
export async function filterToColumns(
  db: Db,
  organizationId: string,
  filter: SubscriptionFilter | null,
): Promise<FilterColumns> {
  const brandIds = filter?.brand_ids === undefined ? null : [...new Set(filter.brand_ids)];
  if (brandIds?.length) {
    const known = await db<{ id: string }[]>`
      SELECT id FROM brands WHERE organization_id = ${organizationId} AND id = ANY(${brandIds}::text[])`;
    const found = new Set(known.map((b) => b.id));
    const unknown = brandIds.filter((id) => !found.has(id));
    if (unknown.length)
      throw invalidField(
        'filter.brand_ids',
        `Unknown brand${unknown.length > 1 ? 's' : ''} of this organization: ${unknown.join(', ')}.`,
      );
  }
  return {
    filter_brand_ids: brandIds,
    filter_points_min: filter?.points_min ?? null,
    filter_points_types: filter?.points_types === undefined ? null : [...new Set(filter.points_types)],
  };
}

/**
 * SQL: does the event `e` pass the filter of the subscription `s` (aliases of `events` and
 * `webhook_subscriptions`)? The one rule of the fan-out and of replay-missing:
 * - brands: an event that names a brand (`data.brand_id`) passes when it is one of `brand_ids`; a
 *   `null` brand (a webshop's customer) does not; an event about no brand at all (the
 *   subscription's own events, `webhook_subscription.*`) always passes;
 * - points: only `points.changed` is checked: `data.points` ≥ `points_min` and `data.type` in
 *   `points_types`; every other type passes.
 */
export const passesFilter = (db: Db) => db`
  (s.filter_brand_ids IS NULL OR NOT (e.data ? 'brand_id') OR (e.data->>'brand_id') = ANY(s.filter_brand_ids))
  AND (e.type <> 'points.changed' OR (
    (s.filter_points_min IS NULL OR (e.data->>'points')::numeric >= s.filter_points_min)
    AND (s.filter_points_types IS NULL OR (e.data->>'type') = ANY(s.filter_points_types))))`;
