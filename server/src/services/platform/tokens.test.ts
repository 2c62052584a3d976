import { describe, expect, it } from 'vitest';
import { randomToken, sha256 } from '../../lib/hash.js';
import { tokenKey } from './tokens.js';

describe('tokenKey', () => {
  it('is the base64 of sha256(token), the hash access_tokens stores and the cache keys on', () => {
    for (const token of [randomToken(32), randomToken(8), 'a', 'tökén-with-ünïcode', ''])
      expect(tokenKey(token)).toBe(sha256(token).toString('base64'));
  });

  it('differs for tokens that differ in one character', () => {
    expect(tokenKey('abc')).not.toBe(tokenKey('abd'));
  });
});
