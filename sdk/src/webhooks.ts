/**
 * `@loyalty/sdk/webhooks`: verify deliveries in a receiver; no HTTP client. The functions here are
 * synchronous (node:crypto, taken through process.getBuiltinModule); `verifyAsync` and
 * `constructEventAsync` (webhooks-web.ts, Web Crypto) run in browsers and workers too, and this
 * module loads there because nothing in its import graph imports a Node module.
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
import type { KeyObject } from 'node:crypto';
import {
  checkedSecrets,
  type HeaderSource,
  loyaltySignatures,
  mismatch,
  parseEvent,
  type RawBody,
  rawOf,
  requireStandardHeaders,
  type Secrets,
  standardDelivery,
  standardKeyBytes,
  type VerifyOptions,
  type WebhookEvent,
} from './internal/webhook-input.js';
import { textOfUtf8 } from './internal/encoding.js';
import { nodeCrypto } from './internal/node-crypto.js';
import { loyaltyDigest, loyaltyKeyOf, signatureValues, standardDigest } from './signing.js';

export {
  type HeaderSource,
  type RawBody,
  type Secrets,
  type VerifyOptions,
  type WebhookEvent,
  type WebhookEventType,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './internal/webhook-input.js';
export { constructEventAsync, verifyAsync } from './webhooks-web.js';

interface SecretKeys {
  /** Loyalty-Signature key: the UTF-8 bytes of the whole secret. */
  loyalty: KeyObject;
  /** Standard Webhooks key: the base64-decoded part after `whsec_` (checked when first needed). */
  standard: KeyObject | undefined;
}

// HMAC keys are prepared once per secret: a KeyObject makes createHmac several times faster than
// raw key bytes.
const keyCache = new Map<string, SecretKeys>();

function keysOf(secret: string): SecretKeys {
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = { loyalty: loyaltyKeyOf(secret), standard: undefined };
    if (keyCache.size >= 64) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

function standardKey(secret: string): KeyObject {
  const keys = keysOf(secret);
  keys.standard ??= nodeCrypto('verifyStandardWebhook').createSecretKey(standardKeyBytes(secret));
  return keys.standard;
}

/** Constant-time comparison of a signature against candidates (length checked first). */
function anyEqual(expected: Uint8Array[], given: Uint8Array[]): boolean {
  const { timingSafeEqual } = nodeCrypto('webhook verification');
  let found = false;
  for (const e of expected) for (const g of given) if (g.length === e.length && timingSafeEqual(g, e)) found = true;
  return found;
}

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
  nodeCrypto('verifySignature');
  const body = rawOf(rawBody);
  const secrets = checkedSecrets(secret);
  const given = loyaltySignatures(signature);
  const expected = secrets.map((s) => loyaltyDigest(keysOf(s).loyalty, body));
  if (!anyEqual(expected, given)) mismatch();
}

/** Checks the Standard Webhooks headers and timestamp. Throws a `WebhookVerificationError` when they do not verify. */
export function verifyStandardWebhook(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: VerifyOptions = {},
): void {
  nodeCrypto('verifyStandardWebhook');
  const body = rawOf(rawBody);
  const keys = checkedSecrets(secret).map(standardKey);
  const { id, timestamp, given } = standardDelivery(headers, options);
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
 * default branch. `constructEventAsync` does the same with Web Crypto, in browsers and workers too.
 */
export function constructEvent(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: VerifyOptions = {},
): WebhookEvent {
  nodeCrypto('constructEvent');
  requireStandardHeaders(headers);
  verifyStandardWebhook(rawBody, headers, secret, options);
  return parseEvent(rawOf(rawBody));
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
  nodeCrypto('signPayload');
  const body = rawOf(input.body);
  const secrets = checkedSecrets(input.secret);
  let envelope: { id?: unknown; type?: unknown } = {};
  try {
    envelope = JSON.parse(textOfUtf8(body)) ?? {};
  } catch {
    // Not JSON: sign it anyway (tests of receivers' error paths).
  }
  const id = input.id ?? (typeof envelope.id === 'string' ? envelope.id : globalThis.crypto.randomUUID());
  const ts = input.timestamp ?? new Date();
  const timestamp = String(typeof ts === 'number' ? Math.floor(ts) : Math.floor(ts.getTime() / 1000));
  const signed = signatureValues(
    body,
    id,
    timestamp,
    secrets.map((s) => ({ loyalty: keysOf(s).loyalty, standard: standardKey(s) })),
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
