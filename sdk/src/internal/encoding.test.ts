import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64, decodeHexDigest, encodeBase64, textOfUtf8, utf8 } from './encoding.js';

const base64ish = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= \t\n!.€'),
  maxLength: 80,
});

describe('decodeBase64 reads what Buffer.from(text, "base64") reads', () => {
  it.each([
    ['QUJDRA==', '41424344'],
    ['QU JD RA', '41424344'],
    ['-_-_', 'fbffbf'],
    ['QUJD€RA', '41424344'],
    ['QU=JD', '41'],
    ['AA\u012BA', '000f80'],
    ['A', ''],
    ['', ''],
  ])('%j', (text, hex) => {
    expect(Buffer.from(decodeBase64(text)).toString('hex')).toBe(hex);
    expect(Buffer.from(text, 'base64').toString('hex')).toBe(hex);
  });

  it('on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.oneof(base64ish, fc.string({ unit: 'binary', maxLength: 80 })), (text) => {
        // Buffer#equals, not toEqual: 2,000 deep comparisons took seconds (fast-check names a failing input).
        return Buffer.from(decodeBase64(text)).equals(Buffer.from(text, 'base64'));
      }),
      { numRuns: 2000 },
    );
  }, 20_000); // 2,000 generated inputs: seconds on a busy machine
});

it('encodeBase64 writes what Buffer#toString("base64") writes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
      expect(encodeBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    }),
  );
});

it('decodeHexDigest takes 64 hex digits in any case, nothing else', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
        fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFgz '), minLength: 62, maxLength: 66 }),
      ),
      (text) => {
        const bytes = Buffer.from(text, 'hex');
        const valid = text.length === 64 && bytes.length === 32;
        expect(decodeHexDigest(text)).toEqual(valid ? new Uint8Array(bytes) : undefined);
      },
    ),
  );
});

it('UTF-8 both ways as Buffer does, lone surrogates and a byte order mark included', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (text, bytes) => {
      expect(Buffer.from(utf8(text)).equals(Buffer.from(text, 'utf8')), text).toBe(true);
      expect(textOfUtf8(bytes)).toBe(Buffer.from(bytes).toString('utf8'));
    }),
  );
  expect(textOfUtf8(Buffer.from('\uFEFF{}'))).toBe('\uFEFF{}');
});
