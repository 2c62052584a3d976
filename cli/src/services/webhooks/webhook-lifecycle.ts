// One webhook subscription read and changed, recovery of failed deliveries, test pings and the
// event catalogue (issue 15's extensions of the API).
import type { components } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { call } from '../common/api.js';
import { parseEvents } from './webhooks.js';
import { describeFilter, type FilterFlags, filterFromFlags, type SampleEvent } from './subscription-filter.js';
import { callWithUrl } from './url-refusal.js';

type Subscription = components['schemas']['WebhookSubscription'];

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/**
 * A point in time from `--since`/`--until`: a duration ago (`90s`, `30m`, `2h`, `7d`, `1w`), or
 * an ISO 8601 time. Anything else is a usage error naming the flag.
 */
export function parseTime(flag: string, value: string, now = Date.now()): string {
  const [, amount, unit] = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(value.trim()) ?? [];
  if (amount && unit) return new Date(now - Number(amount) * (UNITS[unit.toLowerCase()] ?? 0) * 1000).toISOString();
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  throw usageError(
    `${flag} must be a duration ago (like 90s, 30m, 2h, 7d) or an ISO 8601 time (got "${value}").`,
    `Example: ${flag} 2h`,
  );
}

function describe(s: Subscription): string {
  const state = s.active
    ? 'active'
    : `disabled (${s.disabled_reason ?? 'manual'}${s.disabled_at ? ` since ${s.disabled_at}` : ''})`;
  return [
    `id:            ${s.id}`,
    `url:           ${s.url}`,
    `events:        ${s.events.join(', ')}`,
    `filter:        ${describeFilter(s.filter)}`,
    ...(s.description ? [`description:   ${s.description}`] : []),
    `state:         ${state}`,
    `failing since: ${s.failing_since ?? '-'}`,
    `failed in a row: ${s.consecutive_failures}`,
    `created:       ${s.created_at}`,
  ].join('\n');
}

export async function showSubscription(ctx: Context, id: string): Promise<void> {
  const { data } = await call(ctx, (api, signal) =>
    api.GET('/webhook-subscriptions/{id}', { params: { path: { id } }, signal }),
  );
  ctx.output.result(data, () => describe(data));
}

export type UpdateOptions = {
  url?: string;
  events: string[];
  description?: string;
  clearDescription?: boolean;
} & FilterFlags;

/** PATCH with the flags given; `active` set by `enable`/`disable`. At least one change is needed. */
export async function updateSubscription(
  ctx: Context,
  id: string,
  options: UpdateOptions & { active?: boolean },
): Promise<void> {
  const filter = filterFromFlags(options);
  const body: components['schemas']['UpdateWebhookSubscriptionRequest'] = {
    ...(filter !== undefined ? { filter } : {}),
    ...(options.url !== undefined ? { url: options.url } : {}),
    ...(options.events.length ? { events: parseEvents(options.events) } : {}),
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.clearDescription ? { description: null } : {}),
    ...(options.active !== undefined ? { active: options.active } : {}),
  };
  if (!Object.keys(body).length)
    throw usageError(
      'Nothing to change.',
      'Give --url, --events, --description, --clear-description, --brand, --points-min, --points-type or --clear-filter.',
    );
  const { data } = await callWithUrl(ctx, options.url, (api, signal) =>
    api.PATCH('/webhook-subscriptions/{id}', { params: { path: { id } }, body, signal }),
  );
  const what =
    options.active === false
      ? 'Disabled; deliveries waiting for an attempt are parked until you enable it.'
      : options.active === true
        ? 'Enabled; parked deliveries are being sent.'
        : 'Updated.';
  ctx.output.success(`${what} (${data.id})`);
  ctx.output.result(data, () => describe(data));
}

/** `--since` and `--until` (durations back from now, or date-times) as the body of a window. */
function timeWindow(options: { since: string; until?: string }): { since: string; until?: string } {
  const now = Date.now();
  return {
    since: parseTime('--since', options.since, now),
    ...(options.until !== undefined ? { until: parseTime('--until', options.until, now) } : {}),
  };
}

export async function recoverDeliveries(
  ctx: Context,
  id: string,
  options: { since: string; until?: string },
): Promise<void> {
  const body = timeWindow(options);
  const { data } = await call(ctx, (api, signal) =>
    api.POST('/webhook-subscriptions/{id}/recover', { params: { path: { id } }, body, signal }),
  );
  ctx.output.success(
    `${data.recovered} failed ${data.recovered === 1 ? 'delivery' : 'deliveries'} from ${data.since} to ${data.until} queued again.`,
  );
  if (!data.active && data.recovered > 0)
    ctx.output.warn(`The subscription is disabled: they wait until \`loyalty webhooks enable ${id}\`.`);
  if (ctx.output.json) ctx.output.result(data, () => '');
}

/**
 * `webhooks test`: the ping, and with a sample event (`--event`, `--brand`, `--points`,
 * `--points-type`) whether the subscription's types and filter would let it through.
 */
export async function testSubscription(ctx: Context, id: string, sample?: SampleEvent): Promise<void> {
  const { data } = await call(ctx, (api, signal) =>
    api.POST('/webhook-subscriptions/{id}/test', {
      params: { path: { id } },
      ...(sample ? { body: { sample } } : {}),
      signal,
    }),
  );
  const answer = data.status_code === null ? (data.error ?? 'no answer') : `HTTP ${data.status_code}`;
  const detail = `${answer} in ${data.duration_ms} ms${data.response_snippet ? `: ${data.response_snippet}` : ''}`;
  if (ctx.output.json) ctx.output.result(data, () => '');
  else if (sample && data.sample) {
    const what = `A ${describeSample(sample)}`;
    if (data.sample.matches) ctx.output.success(`${what} would be delivered: ${data.sample.reason}.`);
    else ctx.output.warn(`${what} would not be delivered: ${data.sample.reason}.`);
  }
  if (data.outcome === 'delivered') {
    ctx.output.success(`Ping ${data.event_id} delivered (${detail}).`);
    return;
  }
  throw new CliError(`Ping ${data.event_id} failed (${detail}).`, {
    hint: 'Check the receiver with `loyalty webhooks test-receiver <url>`; nothing was retried or recorded.',
  });
}

const describeSample = (e: SampleEvent) =>
  [
    e.type,
    ...(e.brand_id !== undefined ? [`of brand ${e.brand_id ?? 'none'}`] : []),
    ...(e.points_type !== undefined || e.points !== undefined
      ? [`(${[e.points_type, e.points === undefined ? undefined : `${e.points} points`].filter(Boolean).join(' ')})`]
      : []),
  ].join(' ');

/** `webhooks replay-missing`: deliveries of the window's events the subscription matches and never got. */
export async function replayMissing(
  ctx: Context,
  id: string,
  options: { since: string; until?: string },
): Promise<void> {
  const body = timeWindow(options);
  const { data } = await call(ctx, (api, signal) =>
    api.POST('/webhook-subscriptions/{id}/replay-missing', { params: { path: { id } }, body, signal }),
  );
  ctx.output.success(
    `${data.replayed} missed ${data.replayed === 1 ? 'event' : 'events'} from ${data.since} to ${data.until} queued for delivery.`,
  );
  if (!data.active && data.replayed > 0)
    ctx.output.warn(`The subscription is disabled: they wait until \`loyalty webhooks enable ${id}\`.`);
  if (ctx.output.json) ctx.output.result(data, () => '');
}

export async function listEventTypes(ctx: Context): Promise<void> {
  const { data } = await call(ctx, (api, signal) => api.GET('/webhook-event-types', { signal }));
  if (ctx.output.json) {
    ctx.output.result(data, () => '');
    return;
  }
  ctx.output.table(
    data,
    [
      { header: 'type', value: (e) => e.type },
      { header: 'subscribable', value: (e) => e.subscribable },
      { header: 'summary', value: (e) => e.summary, shrink: true },
    ],
    'No event types.',
  );
}
