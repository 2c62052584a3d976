// Sign-up batches. A batch is a fixed range of input positions (send.ts cuts them), so
// batch N holds the same rows in every run over the same file, and its idempotency key
// (file identity + batch index + content) is the same when a resumed import re-sends it.
import { createHash } from 'node:crypto';
import type { SignupUser } from './validate.js';

/** POST /members/signups takes at most this many users per request. */
export const MAX_BATCH_SIZE = 2000;

export interface ImportIdentity {
  /** SHA-256 of the input bytes. */
  sha256: string;
  brandId: string;
}

export function batchIdempotencyKey(identity: ImportIdentity, index: number, users: readonly SignupUser[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([identity.sha256, identity.brandId, index, users]))
    .digest('hex');
  return `loyalty-import-${digest.slice(0, 48)}`;
}
