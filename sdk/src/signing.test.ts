import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signDelivery } from './signing.js';

type Vector = { name: string; secrets: string[]; body: string; headers: Record<string, string> };
const { vectors } = JSON.parse(
  readFileSync(new URL('../../fixtures/webhook-vectors.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

describe('signDelivery', () => {
  it.each(vectors.map((v) => [v.name, v] as const))('matches the published test vector: %s', (_name, v) => {
    const headers = signDelivery(v.body, v.headers['webhook-id']!, Number(v.headers['webhook-timestamp']), v.secrets);
    expect(headers).toEqual({
      'Loyalty-Signature': v.headers['Loyalty-Signature'],
      'webhook-id': v.headers['webhook-id'],
      'webhook-timestamp': v.headers['webhook-timestamp'],
      'webhook-signature': v.headers['webhook-signature'],
    });
  });
});

describe('newWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
