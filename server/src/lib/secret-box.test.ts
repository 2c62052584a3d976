import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { createSecretBox, secretBoxOf, SecretKeyError } from './secret-box.js';

const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const box = createSecretBox({ key: 'key one' });

describe('createSecretBox', () => {
  it('seals with AES-256-GCM under a versioned prefix, and opens what it sealed', () => {
    const sealed = box.seal(secret);
    expect(sealed).toMatch(/^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain('whsec_');
    expect(sealed.startsWith(box.currentPrefix())).toBe(true);
    expect(box.seal(secret)).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe(secret);
  });

  it('opens with the previous key after a rotation, and seals with the new one', () => {
    const sealedBefore = box.seal(secret);
    const rotated = createSecretBox({ key: 'key two', previous: 'key one' });
    expect(rotated.open(sealedBefore)).toBe(secret);
    expect(sealedBefore.startsWith(rotated.currentPrefix())).toBe(false);
    expect(rotated.seal(secret).startsWith(rotated.currentPrefix())).toBe(true);
    expect(rotated.currentPrefix()).not.toBe(box.currentPrefix());
  });

  it('refuses a secret sealed with another key with an error naming the variables, not a wrong secret', () => {
    const other = createSecretBox({ key: 'not the key' });
    const open = () => other.open(box.seal(secret));
    expect(open).toThrow(SecretKeyError);
    expect(open).toThrow(/LOYALTY_SECRET_KEY.*LOYALTY_SECRET_KEY_PREVIOUS/);
    expect(new SecretKeyError('x')).toBeInstanceOf(ConfigError); // start.ts prints it as one line
  });

  it('refuses a damaged sealed secret', () => {
    const sealed = box.seal(secret);
    const damaged = sealed.slice(0, -6) + (sealed.at(-6) === 'A' ? 'B' : 'A') + sealed.slice(-5);
    expect(() => box.open(damaged)).toThrow(/cannot be decrypted/);
  });

  it('reads the plaintext secrets of databases from before encryption, and nothing else unsealed', () => {
    expect(box.open(secret)).toBe(secret);
    expect(() => box.open('v2:whatever')).toThrow(SecretKeyError);
    expect(() => box.open('hunter2')).toThrow(SecretKeyError);
  });

  it('without a key, says which variable is missing when a secret is sealed or opened', () => {
    const keyless = createSecretBox({ key: undefined });
    expect(() => keyless.seal(secret)).toThrow(/LOYALTY_SECRET_KEY is not set/);
    expect(() => keyless.open(box.seal(secret))).toThrow(/LOYALTY_SECRET_KEY is not set/);
    expect(keyless.open(secret)).toBe(secret);
  });
});

describe('secretBoxOf', () => {
  it('derives the key once per configuration of keys', () => {
    const a = secretBoxOf({ secretKey: 'k', secretKeyPrevious: undefined });
    expect(secretBoxOf({ secretKey: 'k', secretKeyPrevious: undefined })).toBe(a);
    expect(secretBoxOf({ secretKey: 'k', secretKeyPrevious: 'j' })).not.toBe(a);
  });
});
