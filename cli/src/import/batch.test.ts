import { describe, expect, it } from 'vitest';
import { batchIdempotencyKey } from './batch.js';

describe('batchIdempotencyKey', () => {
  const identity = { sha256: 'a'.repeat(64), brandId: 'brand-acme' };
  const users = [{ email: 'a@example.com' }];

  it('is the same for the same file, batch and content', () => {
    expect(batchIdempotencyKey(identity, 3, users)).toBe(
      batchIdempotencyKey({ ...identity }, 3, [{ email: 'a@example.com' }]),
    );
    expect(batchIdempotencyKey(identity, 3, users)).toMatch(/^loyalty-import-[0-9a-f]{48}$/);
  });

  it('differs when the file, brand, index or content differs', () => {
    const key = batchIdempotencyKey(identity, 3, users);
    expect(batchIdempotencyKey({ ...identity, sha256: 'b'.repeat(64) }, 3, users)).not.toBe(key);
    expect(batchIdempotencyKey({ ...identity, brandId: 'brand-globex' }, 3, users)).not.toBe(key);
    expect(batchIdempotencyKey(identity, 4, users)).not.toBe(key);
    expect(batchIdempotencyKey(identity, 3, [{ email: 'b@example.com' }])).not.toBe(key);
  });
});
