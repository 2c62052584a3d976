// The forwarding flags of `loyalty webhooks listen`, checked before anything is sent:
// --forward <type>=<url> (per event type), --forward-to (the catch-all), --headers, --forward-retries.
import { signPayload } from '@loyalty/sdk/webhooks';
import type { EventType } from '../../domain.js';
import { usageError } from '../../errors.js';
import { closestEventType, parseEvents } from './webhooks.js';

/** Where each event goes: its type's own URL, else the catch-all, else nowhere (printed only). */
export interface ForwardPlan {
  byType: ReadonlyMap<EventType, string>;
  catchAll?: string;
  headers: Record<string, string>;
  retries: number;
}

export const destinationOf = (plan: ForwardPlan, type: string): string | undefined =>
  plan.byType.get(type as EventType) ?? plan.catchAll;

export const forwards = (plan: ForwardPlan): boolean => plan.byType.size > 0 || plan.catchAll !== undefined;

export function checkedUrl(option: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${option} must be an http(s) URL (got "${value}").`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usageError(`${option} must be an http(s) URL (got "${value}").`);
  return value;
}

/** `--forward coupon.issued=http://localhost:4242/coupons`, repeatable, one URL per type. */
export function parseForwards(values: readonly string[], events: readonly EventType[]): Map<EventType, string> {
  const byType = new Map<EventType, string>();
  for (const value of values) {
    const at = value.indexOf('=');
    if (at < 1)
      throw usageError(
        `--forward takes <event-type>=<url> (got "${value}").`,
        'For example: --forward coupon.issued=http://localhost:4242/coupons',
      );
    const name = value.slice(0, at).trim();
    const url = value.slice(at + 1).trim();
    if (name.includes(',')) throw usageError(`--forward takes one event type per flag (got "${name}").`);
    let type: EventType;
    try {
      [type] = parseEvents([name]) as [EventType];
    } catch (error) {
      const close = closestEventType(name);
      throw usageError(
        `--forward: unknown event type "${name}".${close ? ` Did you mean ${close}?` : ''}`,
        (error as { hint?: string }).hint,
      );
    }
    checkedUrl(`--forward ${type}`, url);
    if (byType.has(type)) throw usageError(`--forward ${type} is given twice; give each type one URL.`);
    if (events.length && !events.includes(type))
      throw usageError(
        `--forward ${type} would never be used: --events does not include ${type}.`,
        `Add it to --events (${[...events, type].join(',')}) or drop that --forward.`,
      );
    byType.set(type, url);
  }
  return byType;
}

// The headers a forward is signed with: taken from the signer itself, so a header it adds one day is protected too.
const SIGNED = new Set(Object.keys(signPayload({ body: '{"id":"x","type":"member.created"}', secret: 'whsec_AAAA' })));
// Headers that describe the request itself; overriding them would break it.
const TRANSPORT = new Set(['content-length', 'host', 'transfer-encoding', 'connection']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `--headers "Name: value"`, repeatable or comma-separated like Stripe's (`"A: 1, B: 2"`). A comma
 * splits only before another `Name:`, so a value may hold commas (`Accept: a, b` stays one header).
 */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    for (const part of value.split(/,(?=\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*:)/)) {
      const at = part.indexOf(':');
      const name = part.slice(0, at).trim();
      const content = part.slice(at + 1).trim();
      if (at < 0 || !TOKEN.test(name))
        throw usageError(
          `--headers takes "Name: value" (got "${part.trim()}").`,
          'For example: --headers "X-Env: dev"',
        );
      const key = name.toLowerCase();
      if (SIGNED.has(key))
        throw usageError(`--headers cannot set ${name}: every forward is signed, and that header is part of it.`);
      if (TRANSPORT.has(key)) throw usageError(`--headers cannot set ${name}: it describes the request itself.`);
      if (/[\r\n\0]/.test(content)) throw usageError(`--headers ${name}: the value cannot hold a line break.`);
      headers[key] = content;
    }
  }
  return headers;
}

export function parseRetries(value: string): number {
  const retries = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(retries) || retries > 20)
    throw usageError(`--forward-retries must be a whole number from 0 to 20 (got "${value}").`);
  return retries;
}

export function forwardPlan(options: {
  forward: readonly string[];
  forwardTo?: string;
  headers: readonly string[];
  forwardRetries: string;
  events: readonly EventType[];
}): ForwardPlan {
  const byType = parseForwards(options.forward, options.events);
  const catchAll = options.forwardTo === undefined ? undefined : checkedUrl('--forward-to', options.forwardTo);
  const headers = parseHeaders(options.headers);
  const retries = parseRetries(options.forwardRetries);
  const plan: ForwardPlan = { byType, headers, retries, ...(catchAll ? { catchAll } : {}) };
  if (!forwards(plan) && Object.keys(headers).length)
    throw usageError('--headers applies to forwarded events: add --forward-to or --forward.');
  return plan;
}
