import { describe, expect, it } from 'vitest';
import {
  constructEvent,
  signPayload,
  verifySignature,
  verifyStandardWebhook,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks.js';
import { pointsChangedEvent, WEBHOOK_SECRET, webhookVectors } from './test-support.js';

const vectors = webhookVectors;
const secret = WEBHOOK_SECRET;
const event = pointsChangedEvent;
const body = JSON.stringify(event);

function reasonOf(fn: () => unknown): WebhookVerificationReason | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
  return undefined;
}

describe('test vectors (fixtures/webhook-vectors.json)', () => {
  it('has vectors', () => expect(vectors.length).toBeGreaterThan(0));
  for (const v of vectors) {
    const now = new Date(Number(v.headers['webhook-timestamp']) * 1000);
    it(`verifies "${v.name}" with all its secrets and with each one`, () => {
      expect(() => verifySignature(v.body, v.headers['Loyalty-Signature'], v.secrets)).not.toThrow();
      expect(() => constructEvent(v.body, v.headers, v.secrets, { now })).not.toThrow();
      for (const s of v.secrets) {
        verifySignature(v.body, v.headers, s);
        verifyStandardWebhook(v.body, v.headers, s, { now });
      }
    });
    it(`signs "${v.name}" exactly as the vector`, () => {
      const signed = signPayload({
        body: v.body,
        secret: v.secrets,
        timestamp: Number(v.headers['webhook-timestamp']),
      });
      for (const [name, value] of Object.entries(v.headers)) expect(signed[name.toLowerCase()], name).toBe(value);
    });
    it(`rejects "${v.name}" with one byte of the body changed`, () => {
      const changed = v.body.replace('brand-acme', 'brand-acmf');
      expect(reasonOf(() => verifySignature(changed, v.headers['Loyalty-Signature'], v.secrets))).toBe(
        'signature_mismatch',
      );
      expect(reasonOf(() => constructEvent(changed, v.headers, v.secrets, { now }))).toBe('signature_mismatch');
    });
  }
});

describe('verifySignature (Loyalty-Signature)', () => {
  const headers = signPayload({ body, secret });
  const sig = headers['loyalty-signature']!;

  it('accepts the raw body as a string, Buffer, Uint8Array or ArrayBuffer', () => {
    const bytes = Buffer.from(body);
    verifySignature(body, sig, secret);
    verifySignature(bytes, sig, secret);
    verifySignature(new Uint8Array(bytes), sig, secret);
    verifySignature(new Uint8Array(bytes).buffer, sig, secret);
    // A view into a larger buffer (as body parsers hand out).
    const pool = Buffer.concat([Buffer.from('xxxx'), bytes, Buffer.from('yy')]);
    verifySignature(pool.subarray(4, 4 + bytes.length), sig, secret);
  });

  it('names the usual mistakes', () => {
    expect(reasonOf(() => verifySignature(event as never, sig, secret))).toBe('body_not_raw');
    expect(reasonOf(() => verifySignature(body, sig, `${secret}\n`))).toBe('secret_whitespace');
    expect(reasonOf(() => verifySignature(body, sig, ` ${secret}`))).toBe('secret_whitespace');
    expect(reasonOf(() => verifySignature(body, sig, secret.slice('whsec_'.length)))).toBe('secret_format');
    expect(reasonOf(() => verifySignature(body, undefined, secret))).toBe('missing_header');
    expect(reasonOf(() => verifySignature(body, {}, secret))).toBe('missing_header');
    expect(reasonOf(() => verifySignature(body, headers['webhook-signature'], secret))).toBe('malformed_header');
    expect(reasonOf(() => verifySignature(JSON.stringify(event, null, 2), sig, secret))).toBe('signature_mismatch');
    expect(reasonOf(() => verifySignature(body, sig, 'whsec_c29tZW90aGVyc2VjcmV0'))).toBe('signature_mismatch');
  });

  it('explains the parsed-body mistake in its message', () => {
    expect(() => verifySignature({ id: 'x' } as never, sig, secret)).toThrow(/raw request body.*parsed JSON object/s);
  });

  it('accepts an uppercase hex signature and rejects a truncated one', () => {
    verifySignature(body, sig.toUpperCase(), secret);
    expect(reasonOf(() => verifySignature(body, sig.slice(0, 62), secret))).toBe('malformed_header');
  });
});

describe('constructEvent (Standard Webhooks)', () => {
  const now = new Date('2026-11-21T10:15:30Z');
  const signed = signPayload({ body, secret, timestamp: now });

  it('returns the typed event', () => {
    const e = constructEvent(body, signed, secret, { now });
    expect(e).toEqual(event);
  });

  it('reads headers from a fetch Headers object and from any-case plain objects', () => {
    constructEvent(body, new Headers(signed), secret, { now });
    const upper = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toUpperCase(), v]));
    constructEvent(body, upper, secret, { now });
    constructEvent(body, { ...signed, 'webhook-signature': [signed['webhook-signature']!] }, secret, { now });
  });

  it('rejects a timestamp outside the tolerance, either way', () => {
    const later = new Date(now.getTime() + 301_000);
    const earlier = new Date(now.getTime() - 301_000);
    expect(reasonOf(() => constructEvent(body, signed, secret, { now: later }))).toBe('stale_timestamp');
    expect(reasonOf(() => constructEvent(body, signed, secret, { now: earlier }))).toBe('stale_timestamp');
    constructEvent(body, signed, secret, { now: new Date(now.getTime() + 299_000) });
    constructEvent(body, signed, secret, { now: later, tolerance: 600 });
  });

  it('rejects a changed id or timestamp (they are signed)', () => {
    expect(reasonOf(() => constructEvent(body, { ...signed, 'webhook-id': 'other' }, secret, { now }))).toBe(
      'signature_mismatch',
    );
    const ts = String(Number(signed['webhook-timestamp']) + 1);
    expect(reasonOf(() => constructEvent(body, { ...signed, 'webhook-timestamp': ts }, secret, { now }))).toBe(
      'signature_mismatch',
    );
  });

  it('names missing and malformed headers', () => {
    const { 'webhook-id': _id, ...noId } = signed;
    expect(reasonOf(() => constructEvent(body, noId, secret, { now }))).toBe('missing_header');
    const onlyLoyalty = { 'loyalty-signature': signed['loyalty-signature']! };
    expect(() => constructEvent(body, onlyLoyalty, secret, { now })).toThrow(/Standard Webhooks headers/);
    expect(
      reasonOf(() => constructEvent(body, { ...signed, 'webhook-timestamp': '2026-11-21' }, secret, { now })),
    ).toBe('malformed_header');
    expect(reasonOf(() => constructEvent(body, { ...signed, 'webhook-signature': 'v2,abc' }, secret, { now }))).toBe(
      'malformed_header',
    );
  });

  it('rejects a secret whose key part is not base64', () => {
    expect(reasonOf(() => constructEvent(body, signed, 'whsec_not base64!', { now }))).toBe('secret_format');
  });

  it('rejects a verified body that is not an event envelope', () => {
    const text = 'hello';
    expect(
      reasonOf(() => constructEvent(text, signPayload({ body: text, secret, timestamp: now }), secret, { now })),
    ).toBe('invalid_payload');
    const list = '[1]';
    expect(
      reasonOf(() => constructEvent(list, signPayload({ body: list, secret, timestamp: now }), secret, { now })),
    ).toBe('invalid_payload');
  });
});

describe('signPayload', () => {
  it('fills id and event type from the body and the timestamp from now', () => {
    const before = Math.floor(Date.now() / 1000);
    const headers = signPayload({ body, secret });
    expect(headers['webhook-id']).toBe(event.id);
    expect(headers['loyalty-message-id']).toBe(event.id);
    expect(headers['loyalty-event']).toBe('points.changed');
    expect(headers['loyalty-attempt']).toBe('1');
    expect(Number(headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(constructEvent(body, headers, secret)).toEqual(event);
  });
});
