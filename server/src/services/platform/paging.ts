import { invalidField } from './errors.js';

/** A page of a list: its number from 1, and how many items a page holds. */
export type Paging = { page: number; perPage: number };

/**
 * page and per_page of a list request: `toNumber` reads a field's value (undefined: absent, its
 * default then); each must be a whole number from 1 up to its greatest, or a 422 names the field.
 */
export function readPaging(
  input: { page?: unknown; per_page?: unknown },
  perPage: { fallback: number; max: number },
  toNumber: (value: unknown) => number | undefined,
): Paging {
  const read = (field: string, value: unknown, fallback: number, max: number) => {
    const n = toNumber(value);
    if (n === undefined) return fallback;
    if (!Number.isInteger(n) || n < 1)
      throw invalidField(field, `The ${field} field must be an integer of at least 1.`);
    if (n > max) throw invalidField(field, `The ${field} field must not be greater than ${max}.`);
    return n;
  };
  return {
    page: read('page', input.page, 1, Number.MAX_SAFE_INTEGER),
    perPage: read('per_page', input.per_page, perPage.fallback, perPage.max),
  };
}
