// Webhook subscriptions and their delivery log.
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { call } from './api.js';

import { EVENT_TYPES } from '../domain.js';

export { EVENT_TYPES };

export interface Subscription {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  secret?: string;
}

export interface DeliveryAttempt {
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_snippet: string | null;
  attempted_at: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
  created_at: string;
}

/** Events from repeated and/or comma-separated flags; unknown names fail before the API is asked. */
export function parseEvents(values: readonly string[]): string[] {
  const events = [...new Set(values.flatMap((value) => value.split(',')).map((e) => e.trim()).filter(Boolean))];
  const unknown = events.filter((event) => !(EVENT_TYPES as readonly string[]).includes(event));
  if (unknown.length) throw usageError(`Unknown event ${unknown.join(', ')}.`, `Events: ${EVENT_TYPES.join(', ')}.`);
  return events;
}

export async function listSubscriptions(ctx: Context, organization: string | undefined): Promise<void> {
  const { data } = await call<{ data: Subscription[] }>(ctx, 'GET', '/webhook-subscriptions', { query: { organization_id: organization } });
  ctx.output.table(data, [
    { header: 'id', value: (s) => s.id },
    { header: 'url', value: (s) => s.url },
    { header: 'events', value: (s) => s.events.join(',') },
    { header: 'active', value: (s) => s.active },
    { header: 'created', value: (s) => s.created_at },
  ], 'No webhook subscriptions. Create one with `loyalty webhooks create`.');
}

export async function createSubscription(
  ctx: Context,
  options: { url: string; events: string[]; organization?: string; printSecret?: boolean },
): Promise<void> {
  const events = options.events.length ? parseEvents(options.events) : [...EVENT_TYPES];
  const { data } = await call<{ data: Subscription }>(ctx, 'POST', '/webhook-subscriptions', {
    body: { url: options.url, events, ...(options.organization ? { organization_id: options.organization } : {}) },
  });
  if (options.printSecret) {
    ctx.output.write(data.secret ?? '');
    return;
  }
  ctx.output.success(`Subscribed ${data.url} to ${data.events.join(', ')} (id ${data.id}).`);
  ctx.output.result(data, () => `signing secret: ${data.secret}`);
  ctx.output.warn('The secret is shown only now: store it with the receiver.');
}

export async function deleteSubscription(ctx: Context, id: string): Promise<void> {
  await call(ctx, 'DELETE', '/webhook-subscriptions/{id}', { path: { id } });
  ctx.output.success(`Deleted webhook subscription ${id}; deliveries waiting for a retry are dropped.`);
  if (ctx.output.json) ctx.output.result({ id, deleted: true }, () => '');
}

export async function rotateSecret(ctx: Context, id: string, printSecret: boolean | undefined): Promise<void> {
  const { data } = await call<{ data: { id: string; secret: string; previous_secret_expires_at: string } }>(
    ctx, 'POST', '/webhook-subscriptions/{id}/rotate-secret', { path: { id } },
  );
  if (printSecret) {
    ctx.output.write(data.secret);
    return;
  }
  ctx.output.success(`New signing secret for ${id}; the previous one stays valid until ${data.previous_secret_expires_at}.`);
  ctx.output.result(data, () => `signing secret: ${data.secret}`);
}

const lastAttempt = (delivery: Delivery): DeliveryAttempt | undefined => delivery.attempts[delivery.attempts.length - 1];

export async function listDeliveries(ctx: Context, id: string, options: { status?: string; limit?: string; after?: string }): Promise<void> {
  const answer = await call<{ data: Delivery[]; next_cursor: string | null }>(ctx, 'GET', '/webhook-subscriptions/{id}/deliveries', {
    path: { id },
    query: { status: options.status, limit: options.limit, after: options.after },
  });
  if (ctx.output.json) {
    ctx.output.result(answer, () => '');
    return;
  }
  ctx.output.table(answer.data, [
    { header: 'delivery', value: (d) => d.id },
    { header: 'event', value: (d) => `${d.event_type} ${d.event_id}` },
    { header: 'status', value: (d) => d.status },
    { header: 'attempts', value: (d) => d.attempts.length },
    { header: 'last result', value: (d) => { const a = lastAttempt(d); return a ? (a.status_code ?? a.error ?? '') : ''; } },
    { header: 'next attempt', value: (d) => d.next_attempt_at ?? '' },
  ], 'No deliveries.');
  if (answer.next_cursor) ctx.output.info(`More: loyalty webhooks deliveries ${id} --after ${answer.next_cursor}`);
}

export async function retryDelivery(ctx: Context, id: string, deliveryId: string): Promise<void> {
  const { data } = await call<{ data: Delivery }>(ctx, 'POST', '/webhook-subscriptions/{id}/deliveries/{delivery_id}/retry', {
    path: { id, delivery_id: deliveryId },
  });
  ctx.output.success(`Delivery ${deliveryId} queued again (status ${data.status}).`);
  if (ctx.output.json) ctx.output.result(data, () => '');
}
