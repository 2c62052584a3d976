import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** A new subscription secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks form). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export type SignedHeaders = {
  'Loyalty-Signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * Both signatures of one delivery attempt (openapi.yaml, "Webhook signatures"; vectors in
 * fixtures/webhook-vectors.json). `secrets` lists the valid secrets newest first; during a
 * rotation each header carries one space-separated entry per secret in that order.
 * - `Loyalty-Signature`: hex HMAC-SHA256 of the body, keyed with the UTF-8 secret string.
 * - `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed with the
 *   base64-decoded part of the secret after `whsec_`.
 */
export function signDelivery(body: string | Buffer, messageId: string, timestamp: number, secrets: readonly string[]): SignedHeaders {
  const loyalty: string[] = [];
  const standard: string[] = [];
  for (const secret of secrets) {
    const keys = keysOf(secret);
    loyalty.push(createHmac('sha256', keys.loyalty).update(body).digest('hex'));
    standard.push(`v1,${createHmac('sha256', keys.standard).update(`${messageId}.${timestamp}.`).update(body).digest('base64')}`);
  }
  return {
    'Loyalty-Signature': loyalty.join(' '),
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standard.join(' '),
  };
}

const keyCache = new Map<string, { loyalty: KeyObject; standard: KeyObject }>();

/**
 * Both HMAC keys of a secret, prepared once: `Loyalty-Signature` is keyed with the UTF-8 bytes of
 * the whole string, Standard Webhooks with the bytes the base64 after `whsec_` stands for.
 * (A KeyObject made once per secret: handing createHmac raw key bytes on every call costs more
 * than the HMAC of a small body.)
 */
function keysOf(secret: string) {
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = {
      loyalty: createSecretKey(Buffer.from(secret, 'utf8')),
      standard: createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64')),
    };
    if (keyCache.size > 10_000) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}
