import { describe, expect, it } from 'vitest';
import { buildPaginator, urlWindow } from './paginator.js';

describe('buildPaginator (Laravel length-aware paginator)', () => {
  const path = 'http://x.test/members/m1/coupons';

  it('describes the first page of 10 out of 25 with from/to and URLs carrying the extra query', () => {
    const p = buildPaginator({
      data: Array.from({ length: 10 }, (_, i) => i),
      total: 25,
      page: 1,
      perPage: 10,
      path,
      query: { brand_id: 'b' },
    });
    expect(p).toMatchObject({
      current_page: 1,
      from: 1,
      to: 10,
      last_page: 3,
      per_page: 10,
      total: 25,
      path,
      first_page_url: `${path}?brand_id=b&page=1`,
      last_page_url: `${path}?brand_id=b&page=3`,
      next_page_url: `${path}?brand_id=b&page=2`,
      prev_page_url: null,
    });
    expect(p.links.map((l) => l.label)).toEqual(['&laquo; Previous', '1', '2', '3', 'Next &raquo;']);
    expect(p.links[1]).toEqual({ url: `${path}?brand_id=b&page=1`, label: '1', active: true });
    expect(p.links[0]!.url).toBeNull();
  });

  it('gives null from/to and one page for an empty result', () => {
    const p = buildPaginator({ data: [], total: 0, page: 1, perPage: 10, path });
    expect(p).toMatchObject({ from: null, to: null, last_page: 1, next_page_url: null, prev_page_url: null });
    expect(p.links.map((l) => [l.label, l.active])).toEqual([
      ['&laquo; Previous', false],
      ['1', true],
      ['Next &raquo;', false],
    ]);
  });

  it('keeps the asked page past the end, with no data', () => {
    const p = buildPaginator({ data: [], total: 5, page: 4, perPage: 10, path });
    expect(p).toMatchObject({
      current_page: 4,
      from: null,
      to: null,
      last_page: 1,
      next_page_url: null,
      prev_page_url: `${path}?page=3`,
    });
  });

  it('numbers the last page from its offset', () => {
    const p = buildPaginator({ data: [1, 2, 3, 4, 5], total: 25, page: 3, perPage: 10, path });
    expect(p).toMatchObject({ from: 21, to: 25, next_page_url: null });
  });
});

describe('urlWindow (Laravel UrlWindow, 3 on each side)', () => {
  it('lists every page below 14 pages', () => {
    expect(urlWindow(5, 13)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });
  it('slides near the start, the middle and the end of many pages', () => {
    expect(urlWindow(1, 50)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, '...', 49, 50]);
    expect(urlWindow(25, 50)).toEqual([1, 2, '...', 22, 23, 24, 25, 26, 27, 28, '...', 49, 50]);
    expect(urlWindow(50, 50)).toEqual([1, 2, '...', 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]);
  });
});
