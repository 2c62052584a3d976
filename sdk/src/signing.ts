/**
 * `@loyalty/sdk/signing`: the HMAC signatures of a webhook delivery, as the server signs them and
 * the SDK verifies them (openapi.yaml, "Webhook signatures"; vectors in fixtures/webhook-vectors.json).
 * - `Loyalty-Signature`: hex HMAC-SHA256 of the body, keyed with the UTF-8 bytes of the whole secret.
 * - `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed with the
 *   bytes the base64 after `whsec_` stands for.
 * During a rotation each header carries one space-separated entry per secret, newest first.
 */
import type { KeyObject } from 'node:crypto';
import { nodeCrypto } from './internal/node-crypto.js';

// node:crypto through process.getBuiltinModule, not a static import: @loyalty/sdk/webhooks imports
// this module, and it must still load in browsers and workers (its Web Crypto functions work there).
const node = () => nodeCrypto('@loyalty/sdk/signing');

/** A new subscription secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks form). */
export const newWebhookSecret = (): string => `whsec_${node().randomBytes(32).toString('base64')}`;

/** The Loyalty-Signature key of a secret: the UTF-8 bytes of the whole string. */
export const loyaltyKeyOf = (secret: string): KeyObject => node().createSecretKey(secret, 'utf8');

/** The bytes of the Standard Webhooks key: the base64 after `whsec_` decoded (unchecked). */
export const standardKeyBytesOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');

/** HMAC-SHA256 of the body (the Loyalty-Signature digest). */
export const loyaltyDigest = (key: KeyObject, body: string | Uint8Array): Buffer =>
  node().createHmac('sha256', key).update(body).digest();

/** HMAC-SHA256 of `{id}.{timestamp}.{body}` (the Standard Webhooks digest). */
export const standardDigest = (
  key: KeyObject,
  id: string,
  timestamp: string | number,
  body: string | Uint8Array,
): Buffer => node().createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();

/** Both keys of one secret. */
export interface SigningKeys {
  loyalty: KeyObject;
  standard: KeyObject;
}

/** The two signature header values of a delivery signed with `keys` (newest secret first). */
export function signatureValues(
  body: string | Uint8Array,
  id: string,
  timestamp: string | number,
  keys: readonly SigningKeys[],
): { loyalty: string; standard: string } {
  let loyalty = '';
  let standard = '';
  for (const k of keys) {
    const sep = loyalty ? ' ' : '';
    loyalty += sep + loyaltyDigest(k.loyalty, body).toString('hex');
    standard += `${sep}v1,${standardDigest(k.standard, id, timestamp, body).toString('base64')}`;
  }
  return { loyalty, standard };
}

export type SignedHeaders = {
  'Loyalty-Signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

// A KeyObject made once per secret: handing createHmac raw key bytes on every call costs more
// than the HMAC of a small body. Secrets are not checked here (the server made them).
const keyCache = new Map<string, SigningKeys>();

function keysOf(secret: string): SigningKeys {
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = { loyalty: loyaltyKeyOf(secret), standard: node().createSecretKey(standardKeyBytesOf(secret)) };
    if (keyCache.size > 10_000) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

/** The signature headers of one delivery attempt, signed with `secrets` (the valid ones, newest first). */
export function signDelivery(
  body: string | Uint8Array,
  messageId: string,
  timestamp: number,
  secrets: readonly string[],
): SignedHeaders {
  const { loyalty, standard } = signatureValues(body, messageId, timestamp, secrets.map(keysOf));
  return {
    'Loyalty-Signature': loyalty,
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standard,
  };
}
