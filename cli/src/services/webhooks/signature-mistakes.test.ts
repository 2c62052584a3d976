import { createSecretKey } from 'node:crypto';
import { loyaltyDigest, signDelivery, standardDigest, standardKeyBytesOf } from '@loyalty/sdk/signing';
import { describe, expect, it } from 'vitest';
import { verifyDelivery } from './verify.js';

// Each test signs a delivery with the server's signer, makes one mistake on the receiver's side
// (or on the signer's), and checks that `--explain` names that mistake.
const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const previous = 'whsec_ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0A=';
const now = new Date('2026-11-24T12:00:00.000Z');
const nowSeconds = Math.floor(now.getTime() / 1000);
const id = '2c0b8f7e-5d4a-4c3b-9a1f-0e9d8c7b6a55';
const event = {
  id,
  type: 'points.changed',
  created_at: '2026-11-24T11:59:59.000Z',
  organization_id: 'org-acme',
  data: {
    member_id: '0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d',
    storecard_id: 'card-points',
    pass_id: '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d',
    type: 'earn',
    points: 10,
    balance: 110,
    reference: 'Café Müller #42',
  },
};
const body = JSON.stringify(event);

/** The lowercase headers of a delivery of `signed`, signed by the server's signer. */
function deliveryOf(signed: string | Buffer, secrets: string[] = [secret], timestamp = nowSeconds) {
  const h = signDelivery(signed, id, timestamp, secrets);
  return {
    'loyalty-signature': h['Loyalty-Signature'],
    'webhook-id': h['webhook-id'],
    'webhook-timestamp': h['webhook-timestamp'],
    'webhook-signature': h['webhook-signature'],
  };
}

function explain(
  given: string | Buffer,
  headers: Record<string, string>,
  secrets: string[] = [secret],
  previousSecrets: string[] = [],
) {
  return verifyDelivery(Buffer.from(given), secrets, {
    headers,
    toleranceSeconds: 300,
    now,
    explain: { previousSecrets },
  });
}

/** The mistakes named for each header that failed. */
function named(checks: ReturnType<typeof explain>): Record<string, string[]> {
  return Object.fromEntries(
    checks.flatMap((c) => (c.valid ? [] : [[c.header, (c.explanation?.mistakes ?? []).map((m) => m.id)]])),
  );
}
const both = (...ids: string[]) => ({ 'Loyalty-Signature': ids, 'webhook-signature': ids });
const whatOf = (checks: ReturnType<typeof explain>) =>
  checks.flatMap((c) => (c.valid ? [] : (c.explanation?.mistakes ?? []).map((m) => m.what))).join('\n');

describe('verify --explain: the catalogue of usual mistakes', () => {
  it('reports a correct signature as valid, without an explanation', () => {
    const checks = explain(body, deliveryOf(body));
    expect(checks).toEqual([
      { header: 'Loyalty-Signature', valid: true },
      { header: 'webhook-signature', valid: true },
    ]);
  });

  it('names a body re-serialized with 2-space indentation', () => {
    const checks = explain(JSON.stringify(JSON.parse(body), null, 2), deliveryOf(body));
    expect(named(checks)).toEqual(both('reserialized_json'));
    expect(whatOf(checks)).toContain('the bytes signed are compact JSON');
    expect(whatOf(checks)).toContain('the body given is 2-space indented JSON (JSON.stringify(value, null, 2)).');
  });

  it('names a body re-serialized compactly, JSON.stringify(JSON.parse(body)), when the signed layout was another', () => {
    const signed = '{"id": "e1", "type": "member.created", "data": {"member_id": "m1", "brand_id": null}}';
    const checks = explain(JSON.stringify(JSON.parse(signed)), deliveryOf(signed));
    expect(named(checks)).toEqual(both('reserialized_json'));
    expect(whatOf(checks)).toContain('Python json.dumps');
  });

  it('names a trailing newline added to the body, and one removed', () => {
    expect(named(explain(`${body}\n`, deliveryOf(body)))).toEqual(both('trailing_newline'));
    const removed = explain(body, deliveryOf(`${body}\n`));
    expect(named(removed)).toEqual(both('trailing_newline'));
    expect(whatOf(removed)).toContain('was removed');
  });

  it('names LF turned into CRLF', () => {
    const pretty = JSON.stringify(event, null, 2);
    const checks = explain(pretty.replaceAll('\n', '\r\n'), deliveryOf(pretty));
    expect(named(checks)).toEqual(both('line_endings'));
    expect(whatOf(checks)).toContain('the body given has CRLF');
  });

  it('names a re-encoded body: UTF-8 read as latin1, latin1 written, a BOM added', () => {
    const mojibake = Buffer.from(Buffer.from(body, 'utf8').toString('latin1'), 'utf8');
    expect(named(explain(mojibake, deliveryOf(body)))).toEqual(both('reencoded_body'));
    expect(named(explain(Buffer.from(body, 'latin1'), deliveryOf(body)))).toEqual(both('reencoded_body'));
    const bom = explain(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]), deliveryOf(body));
    expect(named(bom)).toEqual(both('reencoded_body'));
    expect(whatOf(bom)).toContain('BOM');
  });

  it('names a secret with a trailing newline given (an env var), and a delivery signed with one (a file read untrimmed)', () => {
    expect(named(explain(body, deliveryOf(body), [`${secret}\n`]))).toEqual(both('secret_whitespace'));
    // base64 decoding skips the newline, so only Loyalty-Signature (keyed with the whole string) differs
    expect(named(explain(body, deliveryOf(body, [`${secret}\n`])))).toEqual({
      'Loyalty-Signature': ['secret_whitespace'],
    });
  });

  it('names a secret without its whsec_ prefix, and a delivery signed without it', () => {
    const bare = secret.slice('whsec_'.length);
    expect(named(explain(body, deliveryOf(body), [bare]))).toEqual(both('secret_prefix'));
    expect(named(explain(body, deliveryOf(body, [bare])))).toEqual({ 'Loyalty-Signature': ['secret_prefix'] });
  });

  it('names a base64-decoded key used for Loyalty-Signature, and the raw string used for webhook-signature', () => {
    const headers = deliveryOf(body);
    headers['loyalty-signature'] = loyaltyDigest(createSecretKey(standardKeyBytesOf(secret)), body).toString('hex');
    headers['webhook-signature'] =
      `v1,${standardDigest(createSecretKey(Buffer.from(secret)), id, nowSeconds, body).toString('base64')}`;
    const checks = explain(body, headers);
    expect(named(checks)).toEqual(both('secret_key_form'));
  });

  it('names the previous secret after a rotation (--previous-secret-file)', () => {
    const checks = explain(body, deliveryOf(body, [previous]), [secret], [previous]);
    expect(named(checks)).toEqual(both('previous_secret'));
    expect(whatOf(checks)).toContain('signed with the previous secret');
  });

  it('names a stale timestamp and says by how much, with the clock or the tolerance as the fix', () => {
    const old = explain(body, deliveryOf(body, [secret], nowSeconds - 3600));
    expect(named(old)).toEqual({ 'webhook-signature': ['stale_timestamp'] });
    const [mistake] = old.flatMap((c) => (c.valid ? [] : (c.explanation?.mistakes ?? [])));
    expect(mistake?.what).toBe('webhook-timestamp is 3600 s old (tolerance 300 s).');
    expect(mistake?.fix).toContain('--tolerance 3660');
    const ahead = explain(body, deliveryOf(body, [secret], nowSeconds + 420));
    expect(whatOf(ahead)).toBe('webhook-timestamp is 420 s in the future (tolerance 300 s).');
    expect(JSON.stringify(ahead)).toContain("receiver's clock is about 420 s behind");
  });

  it('says plainly when nothing matches, and lists what was tried', () => {
    const checks = explain(body, deliveryOf(body, [previous]));
    expect(named(checks)).toEqual(both());
    const failed = checks.find((c) => !c.valid);
    expect(failed?.valid === false && failed.explanation).toMatchObject({
      signatureReproduced: false,
      tried: expect.arrayContaining([
        'the body as given',
        'the body with a trailing newline',
        'the secret with a trailing newline',
        'the secret without "whsec_"',
        'the secret as given, base64-decoded vs raw key',
        expect.stringContaining('2-space indented JSON'),
      ]),
    });
  });
});
