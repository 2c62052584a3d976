import { describe, expect, it } from 'vitest';
import { newPassCode, newPassCodes, walletUrl } from './pass-codes.js';

describe('pass codes', () => {
  it('are 16 Crockford base32 characters (80 random bits)', () => {
    for (let i = 0; i < 100; i++) expect(newPassCode()).toMatch(/^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{16}$/);
  });

  it('do not repeat', () => {
    const codes = newPassCodes(20_000);
    expect(new Set(codes).size).toBe(20_000);
  });

  it('use the whole alphabet (no bias towards a few characters)', () => {
    const seen = new Set(newPassCodes(200).join(''));
    expect(seen.size).toBe(32);
  });

  it('make the wallet URL under the base URL', () => {
    expect(walletUrl('http://127.0.0.1:3000/', 'ABC')).toBe('http://127.0.0.1:3000/wallet/ABC');
  });
});
