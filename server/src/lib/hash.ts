import { createHash, randomBytes } from 'node:crypto';

export const sha256 = (...parts: (string | Buffer)[]): Buffer => {
  const h = createHash('sha256');
  for (const part of parts) h.update(part).update('\0');
  return h.digest();
};

/** URL-safe random string with `bytes` bytes of entropy. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/**
 * Canonical JSON (RFC 8785, JCS, for the values `JSON.parse` returns): object keys sorted by
 * UTF-16 code units at every depth, arrays in their order, no whitespace; numbers and strings as
 * `JSON.stringify` writes them, which is what JCS prescribes. Two bodies that mean the same JSON
 * give the same text whatever their key order or spacing. Like `JSON.stringify`, `toJSON` is
 * honoured and `undefined` or functions are left out of objects (null in arrays).
 */
export function canonicalJson(value: unknown): string | undefined {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    value = (value as { toJSON: () => unknown }).toJSON();
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + (canonicalJson(value[i]) ?? 'null');
    return `[${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(record).sort()) {
    const item = canonicalJson(record[key]);
    if (item !== undefined) out += `${(out ? ',' : '') + JSON.stringify(key)}:${item}`;
  }
  return `{${out}}`;
}
