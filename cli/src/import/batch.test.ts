import { describe, expect, it } from 'vitest';
import { batchIdempotencyKey, planBatches } from './batch.js';
import type { AcceptedRow } from './validate.js';

const row = (position: number): AcceptedRow => ({
  position,
  line: position + 2,
  fields: {},
  user: { email: `m${position}@example.com` },
});

describe('planBatches', () => {
  it('cuts batches by input position, so rejected rows do not shift later batches', () => {
    const accepted = [0, 1, 3, 4, 5].map(row); // position 2 was rejected
    const batches = planBatches(6, accepted, 2);
    expect(batches.map((batch) => batch.rows.map((r) => r.position))).toEqual([[0, 1], [3], [4, 5]]);
  });

  it('never exceeds the API limit of 2000 users', () => {
    expect(() => planBatches(10, [], 2001)).toThrow(RangeError);
    const batches = planBatches(
      4500,
      Array.from({ length: 4500 }, (_, i) => row(i)),
      2000,
    );
    expect(batches.map((batch) => batch.rows.length)).toEqual([2000, 2000, 500]);
  });
});

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
