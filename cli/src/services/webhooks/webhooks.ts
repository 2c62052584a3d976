// Webhook subscriptions and their delivery log.
import type { components } from '@loyalty/sdk';
import { closest, distance } from 'fastest-levenshtein';
import type { Context } from '../../context.js';
import { DELIVERY_STATUSES, EVENT_TYPES, type DeliveryStatus, type EventType } from '../../domain.js';
import { usageError } from '../../errors.js';
import { describeFilter, type FilterFlags, filterFromFlags } from './subscription-filter.js';
import { call } from '../common/api.js';
import { callWithUrl } from './url-refusal.js';

type Delivery = components['schemas']['WebhookDelivery'];
type DeliveryAttempt = components['schemas']['WebhookDeliveryAttempt'];

const isEventType = (name: string): name is EventType => (EVENT_TYPES as readonly string[]).includes(name);

/** The event type a mistyped name most likely meant: within a third of its length in edits, or sharing its noun. */
export function closestEventType(name: string): EventType | undefined {
  const best = closest(name.toLowerCase(), [...EVENT_TYPES]) as EventType;
  if (distance(name.toLowerCase(), best) <= Math.max(2, Math.floor(best.length / 3))) return best;
  const noun = name.split('.')[0];
  return EVENT_TYPES.find((type) => type.split('.')[0] === noun);
}

/** Events from repeated and/or comma-separated flags; unknown names fail before the API is asked. */
export function parseEvents(values: readonly string[]): EventType[] {
  const names = [
    ...new Set(
      values
        .flatMap((value) => value.split(','))
        .map((e) => e.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.filter((name) => !isEventType(name));
  if (unknown.length) {
    const close = unknown.map(closestEventType).filter((name) => name !== undefined);
    throw usageError(
      `Unknown event ${unknown.join(', ')}.${close.length ? ` Did you mean ${close.join(', ')}?` : ''}`,
      `Events: ${EVENT_TYPES.join(', ')} (\`loyalty webhooks event-types\` describes each).`,
    );
  }
  return names.filter(isEventType);
}

function deliveryStatus(value: string | undefined): DeliveryStatus | undefined {
  if (value === undefined) return undefined;
  const status = DELIVERY_STATUSES.find((known) => known === value);
  if (!status) throw usageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')} (got "${value}").`);
  return status;
}

function pageSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw usageError(`--limit must be a whole number from 1 to 100 (got "${value}").`);
  return n;
}

export async function listSubscriptions(ctx: Context, organization: string | undefined): Promise<void> {
  const { data } = await call(ctx, (api, signal) =>
    api.GET('/webhook-subscriptions', { params: { query: { organization_id: organization } }, signal }),
  );
  ctx.output.table(
    data,
    [
      { header: 'id', value: (s) => s.id },
      { header: 'url', value: (s) => s.url, shrink: true },
      { header: 'events', value: (s) => s.events.join(','), shrink: true },
      { header: 'active', value: (s) => s.active },
      { header: 'created', value: (s) => s.created_at, optional: true },
    ],
    'No webhook subscriptions. Create one with `loyalty webhooks create`.',
  );
}

export async function createSubscription(
  ctx: Context,
  options: { url: string; events: string[]; organization?: string; printSecret?: boolean } & FilterFlags,
): Promise<void> {
  const events = options.events.length ? parseEvents(options.events) : [...EVENT_TYPES];
  const filter = filterFromFlags(options);
  const body = {
    url: options.url,
    events,
    ...(options.organization ? { organization_id: options.organization } : {}),
    ...(filter ? { filter } : {}),
  };
  const { data } = await callWithUrl(ctx, options.url, (api, signal) =>
    api.POST('/webhook-subscriptions', { body, signal }),
  );
  if (options.printSecret) {
    ctx.output.write(data.secret);
    return;
  }
  ctx.output.success(`Subscribed ${data.url} to ${data.events.join(', ')} (id ${data.id}).`);
  if (data.filter) ctx.output.info(`Filter: ${describeFilter(data.filter)}.`);
  ctx.output.result(data, () => `signing secret: ${data.secret}`);
  ctx.output.warn('The secret is shown only now: store it with the receiver.');
}

export async function deleteSubscription(ctx: Context, id: string): Promise<void> {
  await call(ctx, (api, signal) => api.DELETE('/webhook-subscriptions/{id}', { params: { path: { id } }, signal }));
  ctx.output.success(`Deleted webhook subscription ${id}; deliveries waiting for a retry are dropped.`);
  if (ctx.output.json) ctx.output.result({ id, deleted: true }, () => '');
}

export async function rotateSecret(ctx: Context, id: string, printSecret: boolean | undefined): Promise<void> {
  const { data } = await call(ctx, (api, signal) =>
    api.POST('/webhook-subscriptions/{id}/rotate-secret', { params: { path: { id } }, signal }),
  );
  if (printSecret) {
    ctx.output.write(data.secret);
    return;
  }
  ctx.output.success(
    `New signing secret for ${id}; the previous one stays valid until ${data.previous_secret_expires_at}.`,
  );
  ctx.output.result(data, () => `signing secret: ${data.secret}`);
}

const lastAttempt = (delivery: Delivery): DeliveryAttempt | undefined =>
  delivery.attempts[delivery.attempts.length - 1];

export async function listDeliveries(
  ctx: Context,
  id: string,
  options: { status?: string; limit?: string; after?: string },
): Promise<void> {
  const query = { status: deliveryStatus(options.status), limit: pageSize(options.limit), after: options.after };
  const answer = await call(ctx, (api, signal) =>
    api.GET('/webhook-subscriptions/{id}/deliveries', { params: { path: { id }, query }, signal }),
  );
  if (ctx.output.json) {
    ctx.output.result(answer, () => '');
    return;
  }
  ctx.output.table(
    answer.data,
    [
      { header: 'delivery', value: (d) => d.id },
      { header: 'event', value: (d) => `${d.event_type} ${d.event_id}` },
      { header: 'status', value: (d) => d.status },
      { header: 'attempts', value: (d) => d.attempts.length },
      {
        header: 'last result',
        value: (d) => {
          const a = lastAttempt(d);
          return a ? (a.status_code ?? a.error ?? '') : '';
        },
        shrink: true,
      },
      { header: 'next attempt', value: (d) => d.next_attempt_at ?? '', optional: true },
      { header: 'why', value: (d) => d.next_attempt_reason ?? '', shrink: true },
    ],
    'No deliveries.',
  );
  if (answer.next_cursor) ctx.output.info(`More: loyalty webhooks deliveries ${id} --after ${answer.next_cursor}`);
}

export async function retryDelivery(ctx: Context, id: string, deliveryId: string): Promise<void> {
  const { data } = await call(ctx, (api, signal) =>
    api.POST('/webhook-subscriptions/{id}/deliveries/{delivery_id}/retry', {
      params: { path: { id, delivery_id: deliveryId } },
      signal,
    }),
  );
  ctx.output.success(`Delivery ${deliveryId} queued again (status ${data.status}).`);
  if (ctx.output.json) ctx.output.result(data, () => '');
}
