// Our signatures against the reference Standard Webhooks library (npm `standardwebhooks`), both ways.
import fc from 'fast-check';
import { Webhook, WebhookVerificationError as TheirError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signDelivery } from './signing.js';
import {
  constructEvent,
  constructEventAsync,
  signPayload,
  verifyAsync,
  verifyStandardWebhook,
  WebhookVerificationError,
} from './webhooks.js';

const event = (n: number) =>
  JSON.stringify({
    id: `6f1e2d3c-4b5a-4978-8695-${String(n).padStart(12, '0')}`,
    type: 'member.created',
    created_at: '2026-11-24T10:00:00.000Z',
    organization_id: 'org-acme',
    data: { member_id: 'm-ü-€-😀', brand_id: 'brand-acme' },
  });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Headers of a delivery signed by the reference library. */
function signedByThem(secret: string, body: string, id = 'msg_2Kc1') {
  const seconds = nowSeconds();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign(id, new Date(seconds * 1000), body),
  };
}

describe('signed by standardwebhooks, verified by @loyalty/sdk/webhooks', () => {
  it('an event: constructEvent and constructEventAsync return it', async () => {
    const secret = newWebhookSecret();
    const body = event(1);
    const headers = signedByThem(secret, body);
    expect(constructEvent(body, headers, secret)).toEqual(JSON.parse(body));
    expect(await constructEventAsync(body, headers, secret)).toEqual(JSON.parse(body));
    expect(await constructEventAsync(new TextEncoder().encode(body), new Headers(headers), secret)).toEqual(
      JSON.parse(body),
    );
  });

  it('any body and secret (fast-check): both verify', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.stringMatching(/^[a-zA-Z0-9_-]{1,40}$/),
        async (body, key, id) => {
          const secret = `whsec_${Buffer.from(key).toString('base64')}`;
          const headers = signedByThem(secret, body, id);
          verifyStandardWebhook(body, headers, secret);
          await verifyAsync(body, headers, secret);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a tampered body: both reject it as signature_mismatch', async () => {
    const secret = newWebhookSecret();
    const headers = signedByThem(secret, event(2));
    const tampered = event(3);
    expect(() => constructEvent(tampered, headers, secret)).toThrow(
      expect.objectContaining({ reason: 'signature_mismatch' }),
    );
    await expect(constructEventAsync(tampered, headers, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(constructEventAsync(tampered, headers, secret)).rejects.toMatchObject({
      reason: 'signature_mismatch',
    });
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(TheirError);
  });
});

describe('signed by @loyalty/sdk/signing, verified by standardwebhooks', () => {
  it("signPayload's headers (a receiver's test)", () => {
    const secret = newWebhookSecret();
    const body = event(4);
    const headers = signPayload({ body, secret });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("the server's signDelivery, during a rotation: each secret verifies", () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const body = event(5);
    const headers = signDelivery(body, 'msg-rotation', nowSeconds(), [current, previous]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(TheirError);
  });

  it('any body and secret (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        (body, key) => {
          const secret = `whsec_${Buffer.from(key).toString('base64')}`;
          const headers = signDelivery(body, 'msg-x', nowSeconds(), [secret]);
          new Webhook(secret).verify(body, headers, { jsonParse: false });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a tampered body: both reject it', async () => {
    const secret = newWebhookSecret();
    const headers = signDelivery(event(6), 'msg-tampered', nowSeconds(), [secret]);
    const tampered = event(7);
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(/No matching signature/);
    expect(() => verifyStandardWebhook(tampered, headers, secret)).toThrow(
      expect.objectContaining({ reason: 'signature_mismatch' }),
    );
    await expect(verifyAsync(tampered, headers, secret)).rejects.toMatchObject({ reason: 'signature_mismatch' });
  });
});
