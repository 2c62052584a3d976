import { describe, expect, it } from 'vitest';
import { defined, firstRow } from './defined.js';

describe('defined', () => {
  it('returns the value, falsy ones included', () => {
    expect(defined('x', 'the name')).toBe('x');
    expect(defined(0, 'the count')).toBe(0);
    expect(defined('', 'the text')).toBe('');
    expect(defined(false, 'the flag')).toBe(false);
  });

  it('throws an internal error naming what is missing', () => {
    expect(() => defined(undefined, 'the account row')).toThrow('Internal error: the account row is missing');
    expect(() => defined(null, 'the account row')).toThrow('Internal error: the account row is missing');
  });
});

describe('firstRow', () => {
  it('returns the first row', () => {
    expect(firstRow([{ n: 1 }, { n: 2 }], 'the count')).toEqual({ n: 1 });
  });

  it('throws an internal error when there is no row', () => {
    expect(() => firstRow([], 'the inserted member')).toThrow('Internal error: the inserted member is missing');
  });
});
