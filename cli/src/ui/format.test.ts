import { expect, it } from 'vitest';
import { formatCount } from './format.js';

it('formats counts as en-US does, rounded, with thousands separators', () => {
  for (const n of [0, 7, 999, 1000, 12_345, 999_999.5, 1_234_567, 3_000_000_000, -1234, 1234.4]) {
    expect(formatCount(n), String(n)).toBe(Math.round(n).toLocaleString('en-US'));
  }
});
