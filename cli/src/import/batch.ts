// Cuts validated rows into signup batches. A batch is a fixed range of input positions, so
// batch N holds the same rows in every run over the same file, and its idempotency key
// (file identity + batch index + content) is the same when a resumed import re-sends it.
import { createHash } from 'node:crypto';
import { defined } from '../defined.js';
import type { AcceptedRow, SignupUser } from './validate.js';

/** POST /members/signups takes at most this many users per request. */
export const MAX_BATCH_SIZE = 2000;

export interface SignupBatch {
  index: number;
  rows: AcceptedRow[];
}

export interface ImportIdentity {
  /** SHA-256 of the input bytes. */
  sha256: string;
  brandId: string;
}

export function planBatches(sourceRowCount: number, accepted: readonly AcceptedRow[], size: number): SignupBatch[] {
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw new RangeError(`batch size must be 1 to ${MAX_BATCH_SIZE}`);
  }
  const count = Math.ceil(sourceRowCount / size);
  const batches: SignupBatch[] = Array.from({ length: count }, (_, index) => ({ index, rows: [] }));
  for (const row of accepted)
    defined(batches[Math.floor(row.position / size)], 'batch of an accepted row').rows.push(row);
  return batches;
}

export function batchIdempotencyKey(identity: ImportIdentity, index: number, users: readonly SignupUser[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([identity.sha256, identity.brandId, index, users]))
    .digest('hex');
  return `loyalty-import-${digest.slice(0, 48)}`;
}
