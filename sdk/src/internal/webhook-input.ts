/**
 * What webhook verification checks before and after the HMAC, shared by the Node (`webhooks.ts`)
 * and Web Crypto (`webhooks-web.ts`) entry points so that both throw the same reasons in the same
 * order. No Node imports: browsers and workers load this module.
 */
import type { webhooks } from '../generated/openapi.js';
import { decodeBase64, decodeHexDigest, encodeBase64, textOfUtf8 } from './encoding.js';

/** The body of a delivery, by event type, from the `webhooks` section of openapi.yaml. */
type EventOf<K extends keyof webhooks> = webhooks[K] extends {
  post: { requestBody?: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
/** The union of every event a subscription can receive; narrow it on `type`. */
export type WebhookEvent = { [K in keyof webhooks]: EventOf<K> }[keyof webhooks];
export type WebhookEventType = WebhookEvent extends { type: infer T } ? T : never;

export type WebhookVerificationReason =
  /** A parsed object (or anything but a string or bytes) was passed as the body. */
  | 'body_not_raw'
  /** The secret has whitespace or a newline around it (copied from a file or an env var). */
  | 'secret_whitespace'
  /** The secret does not start with `whsec_`, or what follows is not base64. */
  | 'secret_format'
  | 'missing_header'
  | 'malformed_header'
  /** `webhook-timestamp` is further from now than the tolerance (a replay, or a wrong clock). */
  | 'stale_timestamp'
  /** No signature matches: the body was changed (re-serialized?) or the secret is not this subscription's. */
  | 'signature_mismatch'
  /** The verified body is not a JSON event envelope. */
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The raw request body exactly as received. */
export type RawBody = string | Uint8Array | ArrayBuffer;
/** A plain object (Node's `req.headers`, any case) or a fetch `Headers`. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;
/** One secret, or several during a rotation (any may match). */
export type Secrets = string | readonly string[];

export interface VerifyOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds. Default 300. */
  tolerance?: number;
  /** The current time (for tests). */
  now?: Date;
}

export function fail(reason: WebhookVerificationReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

export const mismatch = (): never =>
  fail(
    'signature_mismatch',
    'No signature matches. Either the body is not the exact bytes received (was it parsed and serialized again, ' +
      'or re-encoded?) or the secret is not the one of this subscription.',
  );

/** The body as HMAC input: a string (hashed as UTF-8) or bytes, never copied. */
export function rawOf(body: RawBody): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return fail(
    'body_not_raw',
    `Expected the raw request body (string, Buffer or Uint8Array), got ${body === null ? 'null' : typeof body}. ` +
      'A parsed JSON object cannot be verified: its bytes differ from what was signed. ' +
      "Read the body raw (Express: express.raw({ type: 'application/json' }); hapi: payload: { parse: false, output: 'data' }; " +
      'fetch: await request.arrayBuffer()).',
  );
}

/** Each secret, checked for the usual copy mistakes (the key bytes are checked when first needed). */
export function checkedSecrets(secrets: Secrets): readonly string[] {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (!Array.isArray(list) || list.length === 0) fail('secret_format', 'No webhook secret given.');
  for (const secret of list as readonly unknown[]) {
    if (typeof secret !== 'string') fail('secret_format', `The webhook secret must be a string, got ${typeof secret}.`);
    if (secret.trim() !== secret)
      fail(
        'secret_whitespace',
        'The webhook secret has whitespace or a newline around it; trim it (it often comes from a file or an env var).',
      );
    if (!secret.startsWith('whsec_'))
      fail(
        'secret_format',
        'The webhook secret must start with "whsec_": pass the whole secret as returned when the subscription was created.',
      );
  }
  return list;
}

/** The Standard Webhooks key: the base64 after `whsec_`, which must be canonical base64 of at least one byte. */
export function standardKeyBytes(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.slice('whsec_'.length);
  const key = decodeBase64(encoded);
  if (key.length === 0 || encodeBase64(key).replace(/=+$/, '') !== encoded.replace(/=+$/, ''))
    fail('secret_format', 'The part of the webhook secret after "whsec_" must be base64.');
  return key;
}

export function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    for (const key in record) if (key.toLowerCase() === name) value = record[key];
  }
  return Array.isArray(value) ? value.join(' ') : value;
}

function requireHeader(headers: HeaderSource, name: string): string {
  const value = header(headers, name)?.trim();
  if (!value) fail('missing_header', `The ${name} header is missing.`);
  return value;
}

/** The digests a `Loyalty-Signature` value (or the header among `signature`) carries, one per secret. */
export function loyaltySignatures(signature: string | HeaderSource | null | undefined): Uint8Array<ArrayBuffer>[] {
  const value = (
    typeof signature === 'object' && signature !== null ? header(signature, 'loyalty-signature') : signature
  )?.trim();
  if (!value) fail('missing_header', 'The Loyalty-Signature header is missing.');
  const entries = value.includes(' ') ? value.split(/\s+/) : [value];
  const given = entries.map(decodeHexDigest);
  if (given.some((g) => g === undefined))
    fail(
      'malformed_header',
      value.startsWith('v1,')
        ? 'This is a webhook-signature (Standard Webhooks) value; pass the Loyalty-Signature header, ' +
            'or all the headers to verifyStandardWebhook or verifyAsync.'
        : 'Loyalty-Signature must be hex HMAC-SHA256 values (64 hex digits), space-separated.',
    );
  return given as Uint8Array<ArrayBuffer>[];
}

/** What the Standard Webhooks headers sign and claim, once their form and timestamp are checked. */
export interface StandardDelivery {
  id: string;
  timestamp: string;
  /** The `v1` signatures, decoded. */
  given: Uint8Array<ArrayBuffer>[];
}

export function standardDelivery(headers: HeaderSource, options: VerifyOptions): StandardDelivery {
  const id = requireHeader(headers, 'webhook-id');
  const timestamp = requireHeader(headers, 'webhook-timestamp');
  const signature = requireHeader(headers, 'webhook-signature');
  if (!/^\d+$/.test(timestamp))
    fail('malformed_header', 'webhook-timestamp must be whole seconds since the Unix epoch.');
  const tolerance = options.tolerance ?? 300;
  const now = Math.floor((options.now?.getTime() ?? Date.now()) / 1000);
  const age = now - Number(timestamp);
  if (Math.abs(age) > tolerance)
    fail(
      'stale_timestamp',
      `webhook-timestamp is ${Math.abs(age)} s ${age > 0 ? 'old' : 'in the future'} (tolerance ${tolerance} s): a replayed delivery, or a clock that is off.`,
    );
  const given = signature
    .split(/\s+/)
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => decodeBase64(entry.slice(3)));
  if (given.length === 0) fail('malformed_header', 'webhook-signature has no "v1,<base64>" entry.');
  return { id, timestamp, given };
}

/** constructEvent's first check: Loyalty-Signature alone carries no timestamp, so it is not enough. */
export function requireStandardHeaders(headers: HeaderSource): void {
  if (!header(headers, 'webhook-signature') && header(headers, 'loyalty-signature'))
    fail(
      'missing_header',
      'The Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) are missing; constructEvent needs them ' +
        'to reject replays. Pass all request headers (verifySignature checks Loyalty-Signature alone).',
    );
}

/** The verified body as an event envelope. */
export function parseEvent(raw: string | Uint8Array): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(textOfUtf8(raw));
  } catch {
    return fail('invalid_payload', 'The body is not JSON.');
  }
  const e = event as Record<string, unknown> | null;
  if (
    typeof e !== 'object' ||
    e === null ||
    typeof e.id !== 'string' ||
    typeof e.type !== 'string' ||
    typeof e.data !== 'object'
  )
    fail('invalid_payload', 'The body is not an event envelope ({ id, type, created_at, organization_id, data }).');
  return event as WebhookEvent;
}
