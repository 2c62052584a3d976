/**
 * `@loyalty/sdk/webhooks`: verify deliveries in a receiver. Pure and synchronous; no HTTP client.
 *
 * Two signatures come with every delivery:
 * - `Loyalty-Signature`: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the UTF-8
 *   bytes of the whole secret string (`whsec_…`).
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`):
 *   HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with the base64-decoded part after
 *   `whsec_`; the timestamp gives replay protection.
 * During a secret rotation each header carries one space-separated entry per secret; pass both
 * secrets (a list) while the old one is still valid.
 */
import { createSecretKey, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { webhooks } from './generated/openapi.js';
import { loyaltyDigest, loyaltyKeyOf, signatureValues, standardDigest, standardKeyBytesOf } from './signing.js';

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

function fail(reason: WebhookVerificationReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

/** The body as HMAC input: a string (hashed as UTF-8) or bytes, never copied. */
function rawOf(body: RawBody): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return fail(
    'body_not_raw',
    `Expected the raw request body (string, Buffer or Uint8Array), got ${body === null ? 'null' : typeof body}. ` +
      'A parsed JSON object cannot be verified: its bytes differ from what was signed. ' +
      "Read the body raw (Express: express.raw({ type: 'application/json' }); hapi: payload: { parse: false, output: 'data' }).",
  );
}

const textOf = (raw: string | Uint8Array) =>
  typeof raw === 'string' ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');

interface SecretKeys {
  /** Loyalty-Signature key: the UTF-8 bytes of the whole secret. */
  loyalty: KeyObject;
  /** Standard Webhooks key: the base64-decoded part after `whsec_` (checked when first needed). */
  standard: KeyObject | undefined;
  secret: string;
}

// HMAC keys are prepared once per secret: a KeyObject makes createHmac several times faster than
// raw key bytes, and the secret is checked only the first time it is seen.
const keyCache = new Map<string, SecretKeys>();

function checkSecret(secret: unknown): SecretKeys {
  const cached = keyCache.get(secret as string);
  if (cached) return cached;
  if (typeof secret !== 'string')
    return fail('secret_format', `The webhook secret must be a string, got ${typeof secret}.`);
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
  const keys: SecretKeys = { loyalty: loyaltyKeyOf(secret), standard: undefined, secret };
  if (keyCache.size >= 64) keyCache.clear();
  keyCache.set(secret, keys);
  return keys;
}

function checkSecrets(secrets: Secrets): SecretKeys[] {
  if (typeof secrets === 'string') return [checkSecret(secrets)];
  if (!Array.isArray(secrets) || secrets.length === 0) fail('secret_format', 'No webhook secret given.');
  return secrets.map(checkSecret);
}

function header(headers: HeaderSource, name: string): string | undefined {
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

/** Constant-time comparison of a signature against candidates (length checked first). */
function anyEqual(expected: Buffer[], given: Buffer[]): boolean {
  let found = false;
  for (const e of expected) for (const g of given) if (g.length === e.length && timingSafeEqual(g, e)) found = true;
  return found;
}

function standardKey(keys: SecretKeys): KeyObject {
  if (keys.standard) return keys.standard;
  const encoded = keys.secret.slice('whsec_'.length);
  const key = standardKeyBytesOf(keys.secret);
  if (key.length === 0 || key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, ''))
    fail('secret_format', 'The part of the webhook secret after "whsec_" must be base64.');
  keys.standard = createSecretKey(key);
  return keys.standard;
}

const mismatch = () =>
  fail(
    'signature_mismatch',
    'No signature matches. Either the body is not the exact bytes received (was it parsed and serialized again, ' +
      'or re-encoded?) or the secret is not the one of this subscription.',
  );

/**
 * Checks `Loyalty-Signature` (the header's value, or all the request headers) against the raw
 * body. Throws a `WebhookVerificationError` when it
 * does not verify. It carries no timestamp: prefer `constructEvent`, which also rejects replays.
 */
export function verifySignature(
  rawBody: RawBody,
  signature: string | HeaderSource | null | undefined,
  secret: Secrets,
): void {
  const body = rawOf(rawBody);
  const secrets = checkSecrets(secret);
  const value = (
    typeof signature === 'object' && signature !== null ? header(signature, 'loyalty-signature') : signature
  )?.trim();
  if (!value) fail('missing_header', 'The Loyalty-Signature header is missing.');
  const entries = value.includes(' ') ? value.split(/\s+/) : [value];
  // Hex decoding stops at the first non-hex character, so a malformed entry comes out short.
  const given = entries.map((e) => Buffer.from(e, 'hex'));
  if (given.some((g) => g.length !== 32) || entries.some((e) => e.length !== 64))
    fail(
      'malformed_header',
      value.startsWith('v1,')
        ? 'This is a webhook-signature (Standard Webhooks) value; pass the Loyalty-Signature header, or use verifyStandardWebhook.'
        : 'Loyalty-Signature must be hex HMAC-SHA256 values (64 hex digits), space-separated.',
    );
  const expected = secrets.map((k) => loyaltyDigest(k.loyalty, body));
  if (!anyEqual(expected, given)) mismatch();
}

export interface VerifyOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds. Default 300. */
  tolerance?: number;
  /** The current time (for tests). */
  now?: Date;
}

/** Checks the Standard Webhooks headers and timestamp. Throws a `WebhookVerificationError` when they do not verify. */
export function verifyStandardWebhook(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: VerifyOptions = {},
): void {
  const body = rawOf(rawBody);
  const keys = checkSecrets(secret).map(standardKey);
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
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  if (given.length === 0) fail('malformed_header', 'webhook-signature has no "v1,<base64>" entry.');
  const expected = keys.map((key) => standardDigest(key, id, timestamp, body));
  if (!anyEqual(expected, given)) mismatch();
}

/**
 * Verifies a delivery (Standard Webhooks headers, with the timestamp tolerance) and returns its
 * typed event. Throws a `WebhookVerificationError` otherwise.
 *
 *     const event = constructEvent(rawBody, req.headers, process.env.LOYALTY_WEBHOOK_SECRET!);
 *     if (event.type === 'points.changed') console.log(event.data.balance);
 *
 * Deliveries are at least once: de-duplicate on `event.id`. New event types may appear; keep a
 * default branch.
 */
export function constructEvent(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: VerifyOptions = {},
): WebhookEvent {
  if (!header(headers, 'webhook-signature') && header(headers, 'loyalty-signature'))
    fail(
      'missing_header',
      'The Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) are missing; constructEvent needs them ' +
        'to reject replays. Pass all request headers (verifySignature checks Loyalty-Signature alone).',
    );
  verifyStandardWebhook(rawBody, headers, secret, options);
  let event: unknown;
  try {
    event = JSON.parse(textOf(rawOf(rawBody)));
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

export interface SignPayloadInput {
  /** The exact body to send. */
  body: string | Uint8Array;
  /** One secret, or several (newest first) to sign as during a rotation. */
  secret: Secrets;
  /** Default: the body's `id`, else a random UUID. */
  id?: string;
  /** Seconds since the epoch, or a Date. Default: now. */
  timestamp?: number | Date;
  /** Loyalty-Attempt. Default 1. */
  attempt?: number;
}

/**
 * The headers a delivery of `body` carries, signed with `secret`: for receivers' tests.
 *
 *     const body = JSON.stringify(event);
 *     await fetch('http://localhost:8080/webhooks', { method: 'POST', body, headers: signPayload({ body, secret }) });
 */
export function signPayload(input: SignPayloadInput): Record<string, string> {
  const body = rawOf(input.body);
  const secrets = checkSecrets(input.secret);
  let envelope: { id?: unknown; type?: unknown } = {};
  try {
    envelope = JSON.parse(textOf(body)) ?? {};
  } catch {
    // Not JSON: sign it anyway (tests of receivers' error paths).
  }
  const id = input.id ?? (typeof envelope.id === 'string' ? envelope.id : randomUUID());
  const ts = input.timestamp ?? new Date();
  const timestamp = String(typeof ts === 'number' ? Math.floor(ts) : Math.floor(ts.getTime() / 1000));
  const signed = signatureValues(
    body,
    id,
    timestamp,
    secrets.map((k) => ({ loyalty: k.loyalty, standard: standardKey(k) })),
  );
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'loyalty-signature': signed.loyalty,
    'loyalty-message-id': id,
    'loyalty-attempt': String(input.attempt ?? 1),
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signed.standard,
  };
  if (typeof envelope.type === 'string') headers['loyalty-event'] = envelope.type;
  return headers;
}
