// Duplicate e-mails in a file of any length with flat memory. The first pass keeps only a 32-bit
// hash of each e-mail: in an open-addressing table (4-6 bytes a row), or, once the file's length
// is known, in a Bloom filter (~1.3 bytes a row: 8 MB at 5 million rows, where a Set of the
// strings would take ~400 MB), and remembers the hashes seen twice. Two e-mails can share a hash,
// and the filter can err towards "seen", so those are only candidates: the second pass compares
// the e-mails themselves, keeping the text of candidate hashes only, and names the first line.

/** FNV-1a over UTF-16 code units, finished with murmur3's mixer so every bit indexes well; never 0. */
export function emailHash(email: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < email.length; i++) h = Math.imul(h ^ email.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0 || 1;
}

/** A set of non-zero 32-bit numbers (0 marks a free slot), grown by doubling at 70 % load. */
class HashSet32 {
  #slots = new Uint32Array(1 << 16);
  #size = 0;

  /** Adds `hash`; false when it was already there. */
  add(hash: number): boolean {
    if ((this.#size + 1) * 10 > this.#slots.length * 7) this.#grow();
    if (!HashSet32.#insert(this.#slots, hash)) return false;
    this.#size += 1;
    return true;
  }

  static #insert(slots: Uint32Array, hash: number): boolean {
    const mask = slots.length - 1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = slots[i];
      if (slot === hash) return false;
      if (slot === 0) {
        slots[i] = hash;
        return true;
      }
    }
  }

  *[Symbol.iterator](): IterableIterator<number> {
    for (const hash of this.#slots) if (hash !== 0) yield hash;
  }

  #grow(): void {
    const next = new Uint32Array(this.#slots.length * 2);
    for (const hash of this.#slots) if (hash !== 0) HashSet32.#insert(next, hash);
    this.#slots = next;
  }
}

/**
 * A Bloom filter of 32-bit hashes, ~10 bits a row: 6 MB for 5 million rows where the exact table
 * takes 32 MB. It may answer "seen" for a hash it has not seen (about 1 % of rows at its size),
 * never the other way round: those rows are only more candidates, told apart exactly later.
 */
class HashBloom {
  static readonly PROBES = 7;
  readonly #bits: Uint32Array;
  readonly #size: number;

  constructor(rows: number) {
    this.#size = Math.max(1 << 16, Math.ceil(rows * 10));
    this.#bits = new Uint32Array(Math.ceil(this.#size / 32));
  }

  /** Adds `hash`; false when every bit of it was set already (seen, or maybe). */
  add(hash: number): boolean {
    // Double hashing (Kirsch-Mitzenmacher): the probes step by a second hash of the same value.
    let step = Math.imul(hash ^ 0x9e3779b9, 0x85ebca6b);
    step = (step ^ (step >>> 15)) | 1;
    let fresh = false;
    for (let i = 0, h = hash; i < HashBloom.PROBES; i++, h = (h + step) >>> 0) {
      const bit = Math.floor((h / 4294967296) * this.#size);
      const word = bit >>> 5;
      const mask = 1 << (bit & 31);
      const value = this.#bits[word] ?? 0;
      if ((value & mask) === 0) {
        this.#bits[word] = value | mask;
        fresh = true;
      }
    }
    return fresh;
  }
}

/** The rows that may repeat an earlier e-mail: their hashes, and how many such rows. */
export interface CandidateRows {
  hashes: ReadonlySet<number>;
  rows: number;
}

/** First pass: which e-mails may occur more than once. */
export class DuplicateCandidates {
  /** Exact until the input's length is known, then a Bloom filter sized for it. */
  #seen: HashSet32 | HashBloom = new HashSet32();
  /** Hashes seen more than once: every duplicate's, and rarely two different e-mails'. */
  readonly hashes = new Set<number>();
  /** Rows whose hash was seen before (an upper bound of the duplicates). */
  rows = 0;

  /**
   * About `rows` rows in all (estimated from the file size): from here on a Bloom filter with room
   * for a quarter more holds the hashes, the ones so far included. More rows than that only make
   * more candidates (the filter fills up), never a missed duplicate.
   */
  expect(rows: number): void {
    if (!(this.#seen instanceof HashSet32)) return;
    const bloom = new HashBloom(Math.min(rows, 1 << 28) * 1.25);
    for (const hash of this.#seen) bloom.add(hash);
    this.#seen = bloom;
  }

  /** What the second pass needs; the table of every hash can then be collected. */
  result(): CandidateRows {
    return { hashes: this.hashes, rows: this.rows };
  }

  add(email: string): void {
    const hash = emailHash(email.toLowerCase());
    if (this.#seen.add(hash)) return;
    this.hashes.add(hash);
    this.rows += 1;
  }
}

/** Second pass: the exact answer, for the candidates only (e-mails compared case-insensitively, as the API does). */
export class DuplicateEmails {
  readonly #candidates: ReadonlySet<number>;
  readonly #firstLine = new Map<string, number>();

  constructor(candidates: ReadonlySet<number>) {
    this.#candidates = candidates;
  }

  /** The line of the earlier occurrence, or undefined the first time an e-mail is seen. */
  seen(email: string, line: number): number | undefined {
    const key = email.toLowerCase();
    if (!this.#candidates.has(emailHash(key))) return undefined;
    const earlier = this.#firstLine.get(key);
    if (earlier !== undefined) return earlier;
    this.#firstLine.set(key, line);
    return undefined;
  }
}
