/**
 * Webhook verification with Web Crypto (`globalThis.crypto.subtle`) and `TextEncoder` only: for
 * browsers, Cloudflare Workers, Deno, Bun and Node alike. No Node imports and no `Buffer`, here or
 * in what this module imports. The same checks in the same order as the synchronous functions of
 * `webhooks.ts` (shared in internal/webhook-input.ts), so both throw the same reasons; only the
 * HMAC differs. `crypto.subtle.verify` compares in constant time.
 */
import { utf8 } from './internal/encoding.js';
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

function subtle(): SubtleCrypto {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle)
    throw new Error(
      'Webhook verification needs Web Crypto (globalThis.crypto.subtle). Browsers offer it only to secure ' +
        'contexts (https:, or http://localhost).',
    );
  return subtle;
}

interface CryptoKeys {
  loyalty?: Promise<CryptoKey>;
  standard?: Promise<CryptoKey>;
}
// Imported once per secret, as the Node functions keep their KeyObjects.
const keyCache = new Map<string, CryptoKeys>();

function keysOf(secret: string): CryptoKeys {
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = {};
    if (keyCache.size >= 64) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

const hmacKey = (bytes: Uint8Array<ArrayBuffer>) =>
  subtle().importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

/** Loyalty-Signature key: the UTF-8 bytes of the whole secret. */
const loyaltyKey = (secret: string): Promise<CryptoKey> => {
  const keys = keysOf(secret);
  keys.loyalty ??= hmacKey(utf8(secret));
  return keys.loyalty;
};

/** Standard Webhooks key: the base64 after `whsec_`, checked synchronously (so in the Node functions' order). */
const standardKey = (secret: string): Promise<CryptoKey> => {
  const keys = keysOf(secret);
  keys.standard ??= hmacKey(standardKeyBytes(secret));
  return keys.standard;
};

const bytesOf = (raw: string | Uint8Array): Uint8Array<ArrayBuffer> =>
  typeof raw === 'string'
    ? utf8(raw)
    : raw.buffer instanceof ArrayBuffer
      ? (raw as Uint8Array<ArrayBuffer>)
      : new Uint8Array(raw);

/** Whether any signature is the HMAC of `data` under any key: every pair is checked, none skipped. */
async function anyVerifies(
  keys: Promise<CryptoKey>[],
  given: Uint8Array<ArrayBuffer>[],
  data: Uint8Array<ArrayBuffer>,
) {
  const signatures = given.filter((g) => g.length === 32);
  const results = await Promise.all(
    (await Promise.all(keys)).flatMap((key) => signatures.map((sig) => subtle().verify('HMAC', key, sig, data))),
  );
  return results.includes(true);
}

async function verifyStandard(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: VerifyOptions,
): Promise<void> {
  const body = rawOf(rawBody);
  const keys = checkedSecrets(secret).map(standardKey);
  const { id, timestamp, given } = standardDelivery(headers, options);
  const prefix = utf8(`${id}.${timestamp}.`);
  const bytes = bytesOf(body);
  const data = new Uint8Array(prefix.length + bytes.length);
  data.set(prefix);
  data.set(bytes, prefix.length);
  if (!(await anyVerifies(keys, given, data))) mismatch();
}

/**
 * Verifies a delivery with Web Crypto; rejects with a `WebhookVerificationError` (the same
 * `reason` as the synchronous functions) when it does not verify.
 * - With the request headers: as `verifyStandardWebhook`, the `webhook-signature` and the
 *   timestamp tolerance (replays are rejected).
 * - With a string, the `Loyalty-Signature` value: as `verifySignature` (no replay protection).
 */
export async function verifyAsync(
  rawBody: RawBody,
  headersOrSignature: HeaderSource | string | null | undefined,
  secret: Secrets,
  options: VerifyOptions = {},
): Promise<void> {
  if (typeof headersOrSignature === 'object' && headersOrSignature !== null)
    return verifyStandard(rawBody, headersOrSignature, secret, options);
  const body = rawOf(rawBody);
  const keys = checkedSecrets(secret).map(loyaltyKey);
  const given = loyaltySignatures(headersOrSignature);
  if (!(await anyVerifies(keys, given, bytesOf(body)))) mismatch();
}

/**
 * `constructEvent` with Web Crypto: verifies a delivery (Standard Webhooks headers, with the
 * timestamp tolerance) and resolves to its typed event, in a browser, a worker, Deno or Node.
 *
 *     export default { async fetch(request, env) {
 *       const event = await constructEventAsync(await request.arrayBuffer(), request.headers, env.LOYALTY_WEBHOOK_SECRET);
 *       …
 *     } };
 */
export async function constructEventAsync(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  requireStandardHeaders(headers);
  await verifyStandard(rawBody, headers, secret, options);
  return parseEvent(rawOf(rawBody));
}
