import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  constructEvent,
  constructEventAsync,
  type HeaderSource,
  type RawBody,
  type Secrets,
  signPayload,
  type VerifyOptions,
  verifyAsync,
  verifySignature,
  verifyStandardWebhook,
  WebhookVerificationError,
} from './webhooks.js';
import { pointsChangedEvent, WEBHOOK_SECRET, webhookVectors } from './test-support.js';

type Outcome = { ok: unknown } | { failed: { name: string; reason: string; message: string } };

async function outcomeOf(run: () => unknown): Promise<Outcome> {
  try {
    return { ok: (await run()) ?? true };
  } catch (e) {
    if (!(e instanceof WebhookVerificationError)) throw e;
    return { failed: { name: e.name, reason: e.reason, message: e.message } };
  }
}
const label = (o: Outcome) => ('ok' in o ? 'ok' : o.failed.reason);

/** Runs the Node function and its Web Crypto counterpart: same result, same error (reason and message). */
async function both(sync: () => unknown, async: () => Promise<unknown>): Promise<string> {
  const [expected, actual] = [await outcomeOf(sync), await outcomeOf(async)];
  expect(actual).toEqual(expected);
  return label(actual);
}

/** The three pairs, for one delivery. */
const pairs = {
  loyalty: (body: RawBody, signature: string | null | undefined, secret: Secrets) =>
    both(
      () => verifySignature(body, signature, secret),
      () => verifyAsync(body, signature, secret),
    ),
  standard: (body: RawBody, headers: HeaderSource, secret: Secrets, options?: VerifyOptions) =>
    both(
      () => verifyStandardWebhook(body, headers, secret, options),
      () => verifyAsync(body, headers, secret, options),
    ),
  event: (body: RawBody, headers: HeaderSource, secret: Secrets, options?: VerifyOptions) =>
    both(
      () => constructEvent(body, headers, secret, options),
      () => constructEventAsync(body, headers, secret, options),
    ),
};

const vectors = webhookVectors;
const secret = WEBHOOK_SECRET;
const oldSecret = 'whsec_c29tZW90aGVyc2VjcmV0';
const event = pointsChangedEvent;
const body = JSON.stringify(event);
const now = new Date('2026-11-21T10:15:30Z');
const signed = signPayload({ body, secret, timestamp: now });
const sig = signed['loyalty-signature'] as string;
const at = (seconds: number): VerifyOptions => ({ now: new Date(now.getTime() + seconds * 1000) });

describe('verifyAsync and constructEventAsync answer as the Node functions', () => {
  it.each(vectors.map((v) => [v.name, v] as const))('test vector "%s", with all its secrets and each', async (_, v) => {
    const options = { now: new Date(Number(v.headers['webhook-timestamp']) * 1000) };
    expect(await pairs.loyalty(v.body, v.headers['Loyalty-Signature'], v.secrets)).toBe('ok');
    expect(await pairs.event(v.body, v.headers, v.secrets, options)).toBe('ok');
    for (const s of v.secrets) expect(await pairs.standard(v.body, v.headers, s, options)).toBe('ok');
    const changed = v.body.replace('brand-acme', 'brand-acmf');
    expect(await pairs.loyalty(changed, v.headers['Loyalty-Signature'], v.secrets)).toBe('signature_mismatch');
    expect(await pairs.event(changed, v.headers, v.secrets, options)).toBe('signature_mismatch');
  });

  it('takes the body as a string, Buffer, Uint8Array, ArrayBuffer, a view into a larger buffer or shared memory', async () => {
    const bytes = Buffer.from(body);
    const pool = Buffer.concat([Buffer.from('xxxx'), bytes, Buffer.from('yy')]);
    const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
    shared.set(bytes);
    for (const raw of [
      body,
      bytes,
      new Uint8Array(bytes),
      new Uint8Array(bytes).buffer,
      pool.subarray(4, -2),
      shared,
    ]) {
      expect(await pairs.loyalty(raw, sig, secret)).toBe('ok');
      expect(await pairs.standard(raw, signed, secret, at(0))).toBe('ok');
      expect(await pairs.event(raw, signed, secret, at(0))).toBe('ok');
    }
  });

  it('returns the typed event', async () => {
    expect(await constructEventAsync(body, signed, secret, at(0))).toEqual(event);
  });

  it('rejects a tampered body, a wrong secret and changed signed headers', async () => {
    const pretty = JSON.stringify(event, null, 2);
    expect(await pairs.loyalty(pretty, sig, secret)).toBe('signature_mismatch');
    expect(await pairs.event(pretty, signed, secret, at(0))).toBe('signature_mismatch');
    expect(await pairs.loyalty(body, sig, oldSecret)).toBe('signature_mismatch');
    expect(await pairs.event(body, signed, oldSecret, at(0))).toBe('signature_mismatch');
    expect(await pairs.event(body, { ...signed, 'webhook-id': 'other' }, secret, at(0))).toBe('signature_mismatch');
    const ts = String(Number(signed['webhook-timestamp']) + 1);
    expect(await pairs.event(body, { ...signed, 'webhook-timestamp': ts }, secret, at(0))).toBe('signature_mismatch');
    expect(await pairs.loyalty(body, sig.replace(/^./, sig[0] === 'a' ? 'b' : 'a'), secret)).toBe('signature_mismatch');
  });

  it('rejects a stale or future timestamp beyond the tolerance, and accepts it within', async () => {
    expect(await pairs.event(body, signed, secret, at(301))).toBe('stale_timestamp');
    expect(await pairs.event(body, signed, secret, at(-301))).toBe('stale_timestamp');
    expect(await pairs.standard(body, signed, secret, at(-301))).toBe('stale_timestamp');
    expect(await pairs.event(body, signed, secret, at(299))).toBe('ok');
    expect(await pairs.event(body, signed, secret, at(-300))).toBe('ok');
    expect(await pairs.event(body, signed, secret, { ...at(301), tolerance: 600 })).toBe('ok');
    expect(await pairs.event(body, signed, secret, { ...at(1), tolerance: 0 })).toBe('stale_timestamp');
  });

  it('names missing and malformed headers', async () => {
    const { 'webhook-id': _id, ...noId } = signed;
    const { 'webhook-signature': _sig, ...noSignature } = signed;
    expect(await pairs.event(body, noId, secret, at(0))).toBe('missing_header');
    expect(await pairs.standard(body, noSignature, secret, at(0))).toBe('missing_header');
    expect(await pairs.event(body, {}, secret, at(0))).toBe('missing_header');
    expect(await pairs.event(body, { 'loyalty-signature': sig }, secret, at(0))).toBe('missing_header');
    await expect(constructEventAsync(body, { 'loyalty-signature': sig }, secret)).rejects.toThrow(
      /Standard Webhooks headers/,
    );
    expect(await pairs.loyalty(body, undefined, secret)).toBe('missing_header');
    expect(await pairs.loyalty(body, '  ', secret)).toBe('missing_header');
    expect(await pairs.event(body, { ...signed, 'webhook-timestamp': '2026-11-21' }, secret, at(0))).toBe(
      'malformed_header',
    );
    expect(await pairs.event(body, { ...signed, 'webhook-signature': 'v2,abc' }, secret, at(0))).toBe(
      'malformed_header',
    );
    expect(await pairs.loyalty(body, signed['webhook-signature'], secret)).toBe('malformed_header');
    expect(await pairs.loyalty(body, sig.slice(0, 62), secret)).toBe('malformed_header');
    expect(await pairs.loyalty(body, `${sig.slice(0, 62)}zz`, secret)).toBe('malformed_header');
  });

  it('reads fetch Headers, any-case records and array values', async () => {
    const upper = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await pairs.event(body, new Headers(signed), secret, at(0))).toBe('ok');
    expect(await pairs.event(body, upper, secret, at(0))).toBe('ok');
    expect(
      await pairs.event(body, { ...signed, 'webhook-signature': [signed['webhook-signature'] ?? ''] }, secret, at(0)),
    ).toBe('ok');
    expect(await pairs.loyalty(body, sig.toUpperCase(), secret)).toBe('ok');
  });

  it('verifies a rotation: two signatures, either secret or both', async () => {
    const rotated = signPayload({ body, secret: [secret, oldSecret], timestamp: now });
    const loyalty = rotated['loyalty-signature'] as string;
    expect(loyalty.split(' ')).toHaveLength(2);
    expect(rotated['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const s of [secret, oldSecret, [secret, oldSecret], [oldSecret, secret]]) {
      expect(await pairs.loyalty(body, loyalty, s)).toBe('ok');
      expect(await pairs.event(body, rotated, s, at(0))).toBe('ok');
    }
    const third = 'whsec_dGhpcmQgc2VjcmV0IG9mIG5vYm9keQ==';
    expect(await pairs.loyalty(body, loyalty, third)).toBe('signature_mismatch');
    expect(await pairs.event(body, rotated, third, at(0))).toBe('signature_mismatch');
    expect(await pairs.event(body, rotated, [third, oldSecret], at(0))).toBe('ok');
  });

  it('checks the whsec_ secret as the Node functions do', async () => {
    expect(await pairs.event(body, signed, secret.slice('whsec_'.length), at(0))).toBe('secret_format');
    expect(await pairs.loyalty(body, sig, secret.slice('whsec_'.length))).toBe('secret_format');
    expect(await pairs.event(body, signed, `${secret}\n`, at(0))).toBe('secret_whitespace');
    expect(await pairs.loyalty(body, sig, ` ${secret}`)).toBe('secret_whitespace');
    expect(await pairs.event(body, signed, 'whsec_not base64!', at(0))).toBe('secret_format');
    expect(await pairs.event(body, signed, 'whsec_', at(0))).toBe('secret_format');
    expect(await pairs.event(body, signed, [], at(0))).toBe('secret_format');
    expect(await pairs.event(body, signed, [secret, 42 as never], at(0))).toBe('secret_format');
    // The padding may be left out; base64url and non-canonical trailing bits are not the secret.
    expect(await pairs.event(body, signed, secret.replace(/=+$/, ''), at(0))).toBe('ok');
    const base64url = 'whsec_-_8A';
    expect(await pairs.event(body, signed, base64url, at(0))).toBe('secret_format');
    expect(await pairs.event(body, signed, 'whsec_AB==', at(0))).toBe('secret_format');
    // Loyalty-Signature is keyed with the whole string, so its key part is not decoded.
    expect(await pairs.loyalty(body, sig, 'whsec_not base64!')).toBe('signature_mismatch');
  });

  it('names the usual body mistakes and bodies that are no event', async () => {
    expect(await pairs.loyalty(event as never, sig, secret)).toBe('body_not_raw');
    expect(await pairs.event(null as never, signed, secret, at(0))).toBe('body_not_raw');
    for (const text of ['hello', '[1]', `\uFEFF${body}`, '']) {
      const headers = signPayload({ body: text, secret, timestamp: now });
      expect(await pairs.event(text, headers, secret, at(0)), JSON.stringify(text)).toBe('invalid_payload');
      expect(await pairs.standard(text, headers, secret, at(0))).toBe('ok');
    }
  });
});

describe('sync and async agree on random deliveries (fast-check)', () => {
  const secretArb = fc
    .uint8Array({ minLength: 1, maxLength: 48 })
    .map((b) => `whsec_${Buffer.from(b).toString('base64')}`);
  const bodyArb = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.uint8Array({ maxLength: 200 }),
    fc.json().map((json) => `{"id":"e","type":"member.created","data":${json}}`),
  );
  const verifyWithArb = fc.constantFrom('first', 'last', 'all', 'outsider', 'outsider-and-last' as const);
  const tamperArb = fc.oneof(
    fc.constant({ kind: 'none' as const }),
    fc.nat().map((at) => ({ kind: 'body' as const, at })),
    fc.string({ maxLength: 60 }).map((value) => ({ kind: 'signature' as const, value })),
  );

  it('verifySignature, verifyStandardWebhook and constructEvent: the same outcome as their async forms', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyArb,
        fc.array(secretArb, { minLength: 1, maxLength: 2 }),
        secretArb,
        verifyWithArb,
        fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }),
        fc.integer({ min: -400, max: 400 }),
        tamperArb,
        async (raw, signers, outsider, verifyWith, timestamp, clockOffset, tamper) => {
          const headers = signPayload({ body: raw, secret: signers, timestamp });
          const secrets = {
            first: signers[0] as string,
            last: signers.slice(-1),
            all: signers,
            outsider,
            'outsider-and-last': [outsider, ...signers.slice(-1)],
          }[verifyWith];
          let received: string | Uint8Array = raw;
          if (tamper.kind === 'body') {
            const bytes = typeof raw === 'string' ? new TextEncoder().encode(raw) : Uint8Array.from(raw);
            const i = tamper.at % Math.max(bytes.length, 1);
            bytes[i] = (bytes[i] ?? 0) ^ 1;
            received = bytes.length > 0 ? bytes : 'x';
          }
          if (tamper.kind === 'signature') {
            headers['webhook-signature'] = tamper.value;
            headers['loyalty-signature'] = tamper.value;
          }
          const options = { now: new Date((timestamp + clockOffset) * 1000) };
          const results = [
            await pairs.loyalty(received, headers['loyalty-signature'], secrets),
            await pairs.standard(received, headers, secrets, options),
            await pairs.event(received, headers, secrets, options),
          ];
          // Not agreement on failing everything: an untouched delivery verifies.
          if (tamper.kind === 'none' && verifyWith !== 'outsider' && Math.abs(clockOffset) <= 300)
            expect(results.slice(0, 2)).toEqual(['ok', 'ok']);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the module graph a browser loads', () => {
  /** Runtime imports (not `import type`) of a source file, resolved, recursively. */
  function runtimeImports(file: URL, seen = new Map<string, string[]>()): Map<string, string[]> {
    if (seen.has(file.href)) return seen;
    const source = readFileSync(file, 'utf8');
    const specifiers = [...source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;]*?from\s+)?'([^']+)'/gms)].map(
      (m) => m[1] as string,
    );
    seen.set(file.href, specifiers);
    for (const s of specifiers) if (s.startsWith('.')) runtimeImports(new URL(s.replace(/\.js$/, '.ts'), file), seen);
    return seen;
  }

  it('imports no node: module from @loyalty/sdk/webhooks, and uses no Buffer in the Web Crypto path', () => {
    const graph = runtimeImports(new URL('./webhooks.ts', import.meta.url));
    expect([...graph.keys()].map((f) => f.replace(/.*\/src\//, '')).sort()).toEqual([
      'internal/encoding.ts',
      'internal/node-crypto.ts',
      'internal/webhook-input.ts',
      'signing.ts',
      'webhooks-web.ts',
      'webhooks.ts',
    ]);
    for (const [file, specifiers] of graph) for (const s of specifiers) expect(s, file).toMatch(/^\.\.?\//);
    const web = runtimeImports(new URL('./webhooks-web.ts', import.meta.url));
    for (const file of web.keys())
      expect(readFileSync(new URL(file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''), file).not.toMatch(
        /\bBuffer\s*[.(]|\bprocess\s*[.?]/,
      );
  });
});
