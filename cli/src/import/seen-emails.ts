// Duplicate e-mails in a file of any length with flat memory. The first pass keeps only a 32-bit
// hash of each e-mail (4 bytes a row in an open-addressing table: 32 MB at 5 million rows, where
// a Set of the strings would take ~400 MB), and remembers the hashes seen twice. Two e-mails can
// share a hash, so those are only candidates: the second pass compares the e-mails themselves,
// keeping the text of candidate hashes only, and names the line of the first occurrence.

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

  get size(): number {
    return this.#size;
  }

  /** Makes room for `count` hashes in all at once, instead of doubling on the way (both tables live while copying). */
  reserve(count: number): void {
    let slots = this.#slots.length;
    while (count * 10 > slots * 7) slots *= 2;
    if (slots !== this.#slots.length) this.#grow(slots);
  }

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

  #grow(slots = this.#slots.length * 2): void {
    const next = new Uint32Array(slots);
    for (const hash of this.#slots) if (hash !== 0) HashSet32.#insert(next, hash);
    this.#slots = next;
  }
}

/** The rows that may repeat an earlier e-mail: their hashes, and how many such rows. */
export interface CandidateRows {
  hashes: ReadonlySet<number>;
  rows: number;
}

/** First pass: which e-mails may occur more than once. */
export class DuplicateCandidates {
  readonly #seen = new HashSet32();
  /** Hashes seen more than once: every duplicate's, and rarely two different e-mails'. */
  readonly hashes = new Set<number>();
  /** Rows whose hash was seen before (an upper bound of the duplicates). */
  rows = 0;

  /** Sizes the table for about `rows` rows at once (e.g. estimated from the file size). */
  expect(rows: number): void {
    this.#seen.reserve(Math.min(rows, 1 << 28));
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
