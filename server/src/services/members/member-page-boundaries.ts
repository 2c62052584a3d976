/**
 * What a server process remembers of its brands' member lists: page boundaries, each saying
 * "the first `offset` links of the brand (in seq order) have a seq of at most `seq`", so a page
 * at or after `offset` seeks from `seq` on the (brand_id, seq) index instead of skipping `offset`
 * rows. A brand's boundaries belong to one version of its list (member-counts.ts): a request that
 * reads another version drops them. Each process has its own (cluster mode); nothing depends on
 * them but speed.
 *
 * Bounded: BRANDS_REMEMBERED brands, least recently used first out; a brand past
 * MARKS_PER_BRAND boundaries keeps every second one (seeks from there stay short).
 */
export type Boundary = { offset: number; seq: string };

const BRANDS_REMEMBERED = 256;
const MARKS_PER_BRAND = 4096;
const START: Boundary = { offset: 0, seq: '0' };

type BrandBoundaries = { version: string; offsets: number[]; seqs: string[] };

export class PageBoundaries {
  readonly #brands = new Map<string, BrandBoundaries>();

  /** The remembered boundary nearest at or below `offset` for this version of the brand's list. */
  nearest(brandId: string, version: string, offset: number): Boundary {
    const brand = this.#brands.get(brandId);
    if (!brand || brand.version !== version) return START;
    this.#brands.delete(brandId);
    this.#brands.set(brandId, brand);
    const i = lastAtOrBelow(brand.offsets, offset);
    return i < 0 ? START : { offset: brand.offsets[i] as number, seq: brand.seqs[i] as string };
  }

  /** Remembers boundaries seen in `version` of the brand's list (a newer version replaces the old ones). */
  remember(brandId: string, version: string, boundaries: Boundary[]): void {
    let brand = this.#brands.get(brandId);
    if (!brand || brand.version !== version) brand = { version, offsets: [], seqs: [] };
    this.#brands.delete(brandId);
    this.#brands.set(brandId, brand);
    for (const { offset, seq } of boundaries) {
      const i = lastAtOrBelow(brand.offsets, offset);
      if (brand.offsets[i] === offset) continue;
      brand.offsets.splice(i + 1, 0, offset);
      brand.seqs.splice(i + 1, 0, seq);
    }
    if (brand.offsets.length > MARKS_PER_BRAND) {
      brand.offsets = brand.offsets.filter((_, i) => i % 2 === 1);
      brand.seqs = brand.seqs.filter((_, i) => i % 2 === 1);
    }
    if (this.#brands.size > BRANDS_REMEMBERED) this.#brands.delete(this.#brands.keys().next().value as string);
  }

  /** How many boundaries are remembered for the brand (tests). */
  size(brandId: string): number {
    return this.#brands.get(brandId)?.offsets.length ?? 0;
  }
}

/** Index of the last element ≤ `value` in ascending `sorted`, or -1. */
function lastAtOrBelow(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** One per database pool: two pools may reach two databases whose brands and versions look alike. */
const perPool = new WeakMap<object, PageBoundaries>();

export function pageBoundariesOf(pool: object): PageBoundaries {
  const known = perPool.get(pool);
  if (known) return known;
  const boundaries = new PageBoundaries();
  perPool.set(pool, boundaries);
  return boundaries;
}
