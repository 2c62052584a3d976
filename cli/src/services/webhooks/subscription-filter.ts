// A subscription's `filter` (issue 29): built from the flags of `webhooks create|update` and
// shown; the sample event of `webhooks test`, built from its flags (the server applies the rule).
import type { components } from '@loyalty/sdk';
import { usageError } from '../../errors.js';

export type Filter = components['schemas']['WebhookSubscriptionFilter'];
type PointsType = NonNullable<Filter['points_types']>[number];

const POINTS_TYPES: readonly PointsType[] = ['earn', 'spend', 'reverse'];

/** The flags of a filter, as commander gives them (`--brand` and `--points-type` repeatable). */
export type FilterFlags = { brand?: string[]; pointsMin?: string; pointsType?: string[]; clearFilter?: boolean };

const list = (values: readonly string[] | undefined) => [
  ...new Set(
    (values ?? [])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter(Boolean),
  ),
];

function pointsTypes(flag: string, values: readonly string[] | undefined): PointsType[] | undefined {
  const types = list(values);
  if (!types.length) return undefined;
  const unknown = types.filter((t) => !(POINTS_TYPES as readonly string[]).includes(t));
  if (unknown.length)
    throw usageError(
      `${flag} must be earn, spend or reverse (got ${unknown.join(', ')}).`,
      `Example: ${flag} earn,spend`,
    );
  return types as PointsType[];
}

function amount(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value.trim()) || Number(value) > 2_147_483_647)
    throw usageError(`${flag} must be a whole number of points, 0 or more (got "${value}").`, `Example: ${flag} 100`);
  return Number(value);
}

/**
 * The filter the flags describe: undefined when none is given, null for `--clear-filter`. On an
 * update the filter given replaces the stored one whole, as PATCH does.
 */
export function filterFromFlags(flags: FilterFlags): Filter | null | undefined {
  const brands = list(flags.brand);
  const filter: Filter = {
    ...(brands.length ? { brand_ids: brands } : {}),
    ...(flags.pointsMin !== undefined ? { points_min: amount('--points-min', flags.pointsMin) } : {}),
    ...(flags.pointsType?.length ? { points_types: pointsTypes('--points-type', flags.pointsType) } : {}),
  };
  const given = Object.keys(filter).length > 0;
  if (flags.clearFilter && given)
    throw usageError('--clear-filter cannot be combined with --brand, --points-min or --points-type.');
  if (flags.clearFilter) return null;
  return given ? filter : undefined;
}

/** One line: what the filter lets through. */
export function describeFilter(filter: Filter | null | undefined): string {
  if (!filter) return 'none (every event of the subscribed types)';
  const parts = [
    ...(filter.brand_ids ? [`brands ${filter.brand_ids.join(', ')}`] : []),
    ...(filter.points_min !== undefined ? [`points.changed of ${filter.points_min} points or more`] : []),
    ...(filter.points_types ? [`points.changed types ${filter.points_types.join(', ')}`] : []),
  ];
  return parts.join('; ');
}

/**
 * A sample event as `webhooks test` describes it with its flags; the server says whether the
 * subscription would deliver one like it (POST /webhook-subscriptions/{id}/test, `sample`).
 */
export type SampleEvent = components['schemas']['WebhookSampleEvent'];
type EventType = SampleEvent['type'];

export function sampleFromFlags(flags: {
  /** Checked by the caller: one of the event types. */
  event?: EventType;
  brand?: string[];
  points?: string;
  pointsType?: string[];
}): SampleEvent | undefined {
  if (flags.event === undefined && !flags.brand?.length && flags.points === undefined && !flags.pointsType?.length)
    return undefined;
  const brands = list(flags.brand);
  if (brands.length > 1) throw usageError('A sample event has one brand: give --brand once.');
  const types = pointsTypes('--points-type', flags.pointsType);
  if (types && types.length > 1) throw usageError('A sample event has one points type: give --points-type once.');
  const points = amount('--points', flags.points);
  const type: EventType | undefined = flags.event ?? (points !== undefined || types ? 'points.changed' : undefined);
  if (type === undefined)
    throw usageError(
      'Give --event <type> to describe the sample event.',
      'Example: --event coupon.issued --brand brand-acme',
    );
  return {
    type,
    ...(brands[0] !== undefined ? { brand_id: brands[0] } : {}),
    ...(points !== undefined ? { points } : {}),
    ...(types?.[0] !== undefined ? { points_type: types[0] } : {}),
  };
}
