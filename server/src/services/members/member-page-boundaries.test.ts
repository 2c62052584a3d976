import { describe, expect, it } from 'vitest';
import { PageBoundaries, pageBoundariesOf } from './member-page-boundaries.js';

describe('PageBoundaries', () => {
  it('answers the nearest boundary at or below an offset, for the version it was remembered in only', () => {
    const b = new PageBoundaries();
    expect(b.nearest('brand', '5.1', 4000)).toEqual({ offset: 0, seq: '0' });
    b.remember('brand', '5.1', [
      { offset: 3000, seq: '3100' },
      { offset: 1000, seq: '1100' },
      { offset: 1000, seq: '9999' },
    ]);
    expect(b.nearest('brand', '5.1', 999)).toEqual({ offset: 0, seq: '0' });
    expect(b.nearest('brand', '5.1', 1000)).toEqual({ offset: 1000, seq: '1100' });
    expect(b.nearest('brand', '5.1', 2999)).toEqual({ offset: 1000, seq: '1100' });
    expect(b.nearest('brand', '5.1', 50_000)).toEqual({ offset: 3000, seq: '3100' });
    expect(b.nearest('other', '5.1', 50_000)).toEqual({ offset: 0, seq: '0' });
    // Another version of the list: nothing known; remembering in it forgets the old version's.
    expect(b.nearest('brand', '6.1', 2000)).toEqual({ offset: 0, seq: '0' });
    b.remember('brand', '6.1', [{ offset: 2000, seq: '2050' }]);
    expect(b.nearest('brand', '5.1', 50_000)).toEqual({ offset: 0, seq: '0' });
    expect(b.nearest('brand', '6.1', 50_000)).toEqual({ offset: 2000, seq: '2050' });
  });

  it('stays bounded: past 4096 boundaries a brand keeps every second one; past 256 brands the least recently used goes', () => {
    const b = new PageBoundaries();
    b.remember(
      'brand',
      'v',
      Array.from({ length: 4097 }, (_, i) => ({ offset: (i + 1) * 10, seq: String((i + 1) * 11) })),
    );
    expect(b.size('brand')).toBe(2048);
    expect(b.nearest('brand', 'v', 25)).toEqual({ offset: 20, seq: '22' });
    for (let i = 0; i < 256; i++) b.remember(`b${i}`, 'v', [{ offset: 1, seq: '1' }]);
    expect(b.size('brand')).toBe(0);
    b.nearest('b0', 'v', 1);
    b.remember('one-more', 'v', [{ offset: 1, seq: '1' }]);
    expect([b.size('b0'), b.size('b1')]).toEqual([1, 0]);
  });

  it('is one per database pool', () => {
    const [a, b] = [{}, {}];
    expect(pageBoundariesOf(a)).toBe(pageBoundariesOf(a));
    expect(pageBoundariesOf(a)).not.toBe(pageBoundariesOf(b));
  });
});
