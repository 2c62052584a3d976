import { createHash, randomBytes } from 'node:crypto';

export const sha256 = (...parts: (string | Buffer)[]): Buffer => {
  const h = createHash('sha256');
  for (const part of parts) h.update(part).update('\0');
  return h.digest();
};

/** URL-safe random string with `bytes` bytes of entropy. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
