import type { Schemas } from './schemas.js';

/**
 * Laravel's length-aware paginator (`LengthAwarePaginator::toArray()`), which the spec uses for
 * member coupons and storecards: page numbers from 1, URLs built from `path` plus `?page=N`
 * (and the query parameters in `query`, as Laravel's `appends()` adds them), `links` as
 * Laravel's `linkCollection()` with its URL window of 3 pages on each side of the current one.
 */
export type Paginator<T> = Omit<Schemas['Paginator'], 'data'> & { data: T[] };
export type PaginatorLink = Schemas['Paginator']['links'][number];

const ON_EACH_SIDE = 3;

export function buildPaginator<T>(options: {
  data: T[];
  total: number;
  page: number;
  perPage: number;
  /** Absolute URL of the endpoint without a query string. */
  path: string;
  /** Query parameters every page URL carries besides `page` (e.g. brand_id, per_page). */
  query?: Record<string, string | number | undefined>;
}): Paginator<T> {
  const { data, total, page, perPage, path } = options;
  const lastPage = Math.max(Math.ceil(total / perPage), 1);
  const url = (n: number) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {}))
      if (value !== undefined) params.set(key, String(value));
    params.set('page', String(n));
    return `${path}?${params.toString()}`;
  };
  const from = data.length ? (page - 1) * perPage + 1 : null;
  const links: PaginatorLink[] = [{ url: page > 1 ? url(page - 1) : null, label: '&laquo; Previous', active: false }];
  for (const element of urlWindow(page, lastPage)) {
    if (element === '...') links.push({ url: null, label: '...', active: false });
    else links.push({ url: url(element), label: String(element), active: element === page });
  }
  links.push({ url: page < lastPage ? url(page + 1) : null, label: 'Next &raquo;', active: false });
  return {
    current_page: page,
    data,
    first_page_url: url(1),
    from,
    last_page: lastPage,
    last_page_url: url(lastPage),
    links,
    next_page_url: page < lastPage ? url(page + 1) : null,
    path,
    per_page: perPage,
    prev_page_url: page > 1 ? url(page - 1) : null,
    to: from === null ? null : from + data.length - 1,
    total,
  };
}

/** Laravel's `UrlWindow`: every page when there are few, else first two, a slider and last two. */
export function urlWindow(page: number, lastPage: number): (number | '...')[] {
  const range = (a: number, b: number) => Array.from({ length: Math.max(b - a + 1, 0) }, (_, i) => a + i);
  if (lastPage < ON_EACH_SIDE * 2 + 8) return range(1, lastPage);
  const window = ON_EACH_SIDE + 4;
  const start = range(1, 2);
  const finish = range(lastPage - 1, lastPage);
  if (page <= window) return [...range(1, window + ON_EACH_SIDE), '...', ...finish];
  if (page > lastPage - window) return [...start, '...', ...range(lastPage - (window + (ON_EACH_SIDE - 1)), lastPage)];
  return [...start, '...', ...range(page - ON_EACH_SIDE, page + ON_EACH_SIDE), '...', ...finish];
}
