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
 *
 * Iterative, with its own stack of open containers: a request body nested 100,000 levels deep
 * (which `JSON.parse` and the routes accept) is hashed like any other, not a stack overflow and a
 * 500 for the request that carries an `Idempotency-Key` (issue 25).
 */
export function canonicalJson(value: unknown): string | undefined {
  const top = plain(value);
  if (!isContainer(top)) return JSON.stringify(top);
  const parts: string[] = [];
  const stack: Frame[] = [];
  const open = (container: object) => {
    if (Array.isArray(container)) {
      parts.push('[');
      stack.push({ items: container, i: 0 });
    } else {
      const record = container as Record<string, unknown>;
      parts.push('{');
      stack.push({ record, keys: Object.keys(record).sort(), i: 0, written: 0 });
    }
  };
  open(top);
  for (let frame = stack.at(-1); frame; frame = stack.at(-1)) {
    if ('items' in frame) {
      if (frame.i >= frame.items.length) {
        parts.push(']');
        stack.pop();
        continue;
      }
      if (frame.i) parts.push(',');
      const item = plain(frame.items[frame.i++]);
      if (isContainer(item)) open(item);
      else parts.push(JSON.stringify(item) ?? 'null');
      continue;
    }
    if (frame.i >= frame.keys.length) {
      parts.push('}');
      stack.pop();
      continue;
    }
    const key = frame.keys[frame.i++] as string;
    const item = plain(frame.record[key]);
    const text = isContainer(item) ? undefined : JSON.stringify(item);
    if (!isContainer(item) && text === undefined) continue;
    parts.push(`${frame.written++ ? ',' : ''}${JSON.stringify(key)}:`);
    if (isContainer(item)) open(item);
    else parts.push(text as string);
  }
  return parts.join('');
}

type Frame =
  | { items: unknown[]; i: number }
  | { record: Record<string, unknown>; keys: string[]; i: number; written: number };

/** The value `JSON.stringify` would write for `value`: its `toJSON()` when it has one. */
const plain = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function'
    ? (value as { toJSON: () => unknown }).toJSON()
    : value;

const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;
