import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { defined } from '../../lib/defined.js';
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

/*
 * The rule's checks, in SQL over the event `e` and the subscription `s` (aliases of `events` and
 * `webhook_subscriptions`). Each is true, or false; `null` only for a sample that leaves out the
 * attribute it reads (sampleVerdict), as a real event never does.
 * - brands: an event that names a brand (`data.brand_id`) passes when it is one of `brand_ids`; a
 *   `null` brand (a webshop's customer) does not; an event about no brand at all (the
 *   subscription's own events, `webhook_subscription.*`) always passes;
 * - points: only `points.changed` is checked: `data.points` ≥ `points_min` and `data.type` in
 *   `points_types`; every other type passes.
 */
const brandCheck = (db: Db) => db`
  (s.filter_brand_ids IS NULL OR NOT (e.data ? 'brand_id') OR coalesce((e.data->>'brand_id') = ANY(s.filter_brand_ids), false))`;
const pointsMinCheck = (db: Db) => db`
  (e.type <> 'points.changed' OR s.filter_points_min IS NULL OR (e.data->>'points')::numeric >= s.filter_points_min)`;
const pointsTypeCheck = (db: Db) => db`
  (e.type <> 'points.changed' OR s.filter_points_types IS NULL OR (e.data->>'type') = ANY(s.filter_points_types))`;

/** SQL: does the event `e` pass the filter of the subscription `s`? The one rule of the fan-out, replay-missing and a test's sample. */
export const passesFilter = (db: Db) => db`${brandCheck(db)} AND ${pointsMinCheck(db)} AND ${pointsTypeCheck(db)}`;

export type SampleEvent = Schemas['WebhookSampleEvent'];
export type SampleVerdict = NonNullable<Schemas['WebhookTestResponse']['data']['sample']>;

/**
 * Would the subscription deliver an event like `sample`? Its type must be subscribed, then the
 * filter's checks above, in SQL as the fan-out runs them; the reason names the first that fails.
 * A check whose attribute the sample leaves out is passed (its value is null).
 */
export async function sampleVerdict(db: Db, subscriptionId: string, sample: SampleEvent): Promise<SampleVerdict> {
  const data = {
    ...(sample.brand_id !== undefined ? { brand_id: sample.brand_id } : {}),
    ...(sample.points !== undefined ? { points: sample.points } : {}),
    ...(sample.points_type !== undefined ? { type: sample.points_type } : {}),
  };
  // Three columns, not an array: postgres.js reads a NULL element of a boolean array as false.
  const [row] = await db<
    (FilterColumns & {
      events: string[];
      subscribed: boolean;
      brand: boolean;
      points_min: boolean | null;
      points_type: boolean | null;
    })[]
  >`
    SELECT s.events, e.type = ANY(s.events) AS subscribed, ${filterColumns(db)},
           ${brandCheck(db)} AS brand, ${pointsMinCheck(db)} AS points_min, ${pointsTypeCheck(db)} AS points_type
    FROM webhook_subscriptions s, (SELECT ${sample.type}::text AS type, ${db.json(data)}::jsonb AS data) e
    WHERE s.id = ${subscriptionId}`;
  const r = defined(row, 'the subscription');
  if (!r.subscribed)
    return { matches: false, reason: `${sample.type} is not one of the subscribed events (${r.events.join(', ')})` };
  const { brand, points_min: pointsMin, points_type: pointsType } = r;
  if (brand === false)
    return {
      matches: false,
      reason: `brand ${sample.brand_id ?? 'none'} is not in the filter (${r.filter_brand_ids?.join(', ')})`,
    };
  if (pointsMin === false)
    return {
      matches: false,
      reason: `${sample.points} points is under the filter's minimum of ${r.filter_points_min}`,
    };
  if (pointsType === false)
    return {
      matches: false,
      reason: `type ${sample.points_type} is not in the filter (${r.filter_points_types?.join(', ')})`,
    };
  const filter = presentFilter(r);
  const unchecked = [
    sample.brand_id === undefined && r.filter_brand_ids ? 'brand_id' : undefined,
    pointsMin === null ? 'points' : undefined,
    pointsType === null ? 'points_type' : undefined,
  ].filter(Boolean);
  return {
    matches: true,
    reason: !filter
      ? 'no filter'
      : `passes the filter${unchecked.length ? ` (${unchecked.join(', ')} not given: not checked)` : ''}`,
  };
}
