// Checks an import file's bytes before the parser sees them: UTF-8 text, no NUL bytes. It
// also keeps the recent bytes and where the last quoted CSV field opened, so that an error
// can name a line and a column instead of a byte offset the user cannot find.
import { usageError, type CliError } from '../errors.js';

/** Recent input kept for error positions; a record longer than this gets a byte column. */
const WINDOW_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const NOT_TEXT = 'this is not a text file. Export the data as CSV (UTF-8) or JSON Lines.';

/** Text in any encoding has no C0 controls besides tab, line ends, form feed and escape. */
function hasControlCharacters(bytes: Buffer): boolean {
  return bytes.some(
    (byte) => byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0c && byte !== 0x0d && byte !== 0x1b,
  );
}

export interface Position {
  line: number;
  column: number;
}

export class TextGuard {
  /** Line (1-based) of the next byte to check. */
  private line = 1;
  /** Offset of the next byte to check, and of the first byte of its line. */
  private offset = 0;
  private lineStart = 0;
  /** Bytes received so far; checking lags behind by a UTF-8 sequence that a chunk cut off. */
  private received = 0;
  private carry: Buffer = Buffer.alloc(0);
  private readonly recent: Array<{ offset: number; bytes: Buffer }> = [];
  private recentBytes = 0;
  // CSV quote state: a field that starts with `"` runs to a `"` not followed by another.
  private quoted = false;
  private afterQuote = false;
  private fieldStart = true;
  private quoteOpened: { line: number; lineStart: number; offset: number } | undefined;

  private readonly name: string;
  /** CSV delimiter as a byte, when quotes are to be followed (CSV input). */
  private readonly delimiter: number | undefined;

  constructor(name: string, delimiter?: number) {
    this.name = name;
    this.delimiter = delimiter;
  }

  /** Throws a usage error at the first byte that is not UTF-8 text. */
  check(chunk: Buffer): void {
    if (this.received === 0) this.refuseUtf16(chunk);
    this.remember(chunk);
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const start = this.offset;
    let i = 0;
    while (i < bytes.length) {
      const byte = bytes[i];
      if (byte === undefined) throw new Error('Internal error: byte within the chunk is missing');
      if (byte < 0x80) {
        if (byte === 0) throw this.refusal(start + i, NOT_TEXT);
        if (this.delimiter !== undefined) this.followQuotes(byte, start + i);
        if (byte === NEWLINE) {
          this.line += 1;
          this.lineStart = start + i + 1;
        }
        i += 1;
        continue;
      }
      const length = sequenceLength(bytes, i, byte);
      if (length === 0) break; // cut off by the chunk's end: completed by the next chunk
      if (length < 0) {
        if (hasControlCharacters(bytes.subarray(Math.max(0, i - 512), i + 512)))
          throw this.refusal(start + i, NOT_TEXT);
        throw this.refusal(
          start + i,
          `this file is not UTF-8 (byte 0x${byte.toString(16).toUpperCase()}). Save it as "CSV UTF-8", or convert it with \`iconv -f WINDOWS-1252 -t UTF-8 ${this.name} > utf8.csv\``,
        );
      }
      // A BOM is not part of the first field: the quote after it still opens one.
      const bom = start + i === 0 && length === 3 && byte === 0xef && bytes[i + 1] === 0xbb && bytes[i + 2] === 0xbf;
      if (this.delimiter !== undefined && !bom) this.followQuotes(byte, start + i);
      i += length;
    }
    this.carry = Buffer.from(bytes.subarray(i));
    this.offset = start + i;
  }

  /** At the end of the input: a UTF-8 sequence cut off by the end of the file. */
  finish(): void {
    if (this.carry.length > 0) {
      throw this.refusal(this.offset, 'this file is not UTF-8 (it ends inside a character). Save it as "CSV UTF-8".');
    }
  }

  /** Where the quoted field that is still open at the end of the input began. */
  openQuote(): Position | undefined {
    if (!this.quoted || !this.quoteOpened) return undefined;
    const { line, lineStart, offset } = this.quoteOpened;
    return { line, column: this.columnOf(lineStart, offset) };
  }

  /** The text of a line, if it is still among the recent bytes. */
  lineText(line: number): string | undefined {
    const first = this.recent[0];
    if (!first) return undefined;
    const text = Buffer.concat(this.recent.map((r) => r.bytes));
    let lineAtStart = this.line;
    for (let i = this.offset - first.offset - 1; i >= 0; i--) if (text[i] === NEWLINE) lineAtStart -= 1;
    const lines = text.toString('utf8').split('\n');
    const index = line - lineAtStart;
    const found = lines[index];
    // Unless the window starts the file, its first line may have begun before it.
    if (index < (first.offset === 0 ? 0 : 1) || found === undefined) return undefined;
    return found.replace(/\r$/, '').replace(/^\uFEFF/, '');
  }

  private followQuotes(byte: number, at: number): void {
    if (this.quoted) {
      if (byte === QUOTE) {
        this.quoted = false;
        this.afterQuote = true;
      }
      return;
    }
    if (byte === QUOTE && (this.fieldStart || this.afterQuote)) {
      // `""` inside a quoted field is an escaped quote: the same field goes on.
      if (this.fieldStart) this.quoteOpened = { line: this.line, lineStart: this.lineStart, offset: at };
      this.quoted = true;
      this.afterQuote = false;
      this.fieldStart = false;
      return;
    }
    this.afterQuote = false;
    this.fieldStart = byte === this.delimiter || byte === NEWLINE;
  }

  private refuseUtf16(chunk: Buffer): void {
    if (chunk.length >= 2 && ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff))) {
      throw usageError(
        `${this.name}: this file is UTF-16 (Excel's "Unicode Text"). Save it as "CSV UTF-8", or convert it with \`iconv -f UTF-16 -t UTF-8 ${this.name} > utf8.csv\``,
      );
    }
  }

  private refusal(at: number, what: string): CliError {
    return usageError(`${this.name}:${this.line}:${this.columnOf(this.lineStart, at)}: ${what}`);
  }

  /** 1-based column in characters of the byte at `at` on the line that starts at `lineStart`. */
  private columnOf(lineStart: number, at: number): number {
    const first = this.recent[0];
    if (!first || lineStart < first.offset) return at - lineStart + 1; // a very long line: bytes will do
    const text = Buffer.concat(this.recent.map((r) => r.bytes)).subarray(lineStart - first.offset, at - first.offset);
    // Editors do not show a BOM, so it takes no column.
    return [...text.toString('utf8').replace(/^\uFEFF/, '')].length + 1;
  }

  private remember(chunk: Buffer): void {
    this.recent.push({ offset: this.received, bytes: chunk });
    this.received += chunk.length;
    this.recentBytes += chunk.length;
    while (this.recent.length > 2) {
      const oldest = this.recent[0];
      if (!oldest || this.recentBytes - oldest.bytes.length < WINDOW_BYTES) break;
      this.recent.shift();
      this.recentBytes -= oldest.bytes.length;
    }
  }
}

/**
 * Length of the UTF-8 sequence that starts at `i` with byte `lead`: 2 to 4, 0 when the buffer
 * ends inside it, -1 when it is not UTF-8 (a stray continuation byte, an overlong form, a surrogate).
 */
function sequenceLength(bytes: Buffer, i: number, lead: number): number {
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return -1;
  for (let k = 1; k < length; k++) {
    const next = bytes[i + k];
    if (next === undefined) return 0;
    if (k === 1 ? next < low || next > high : (next & 0xc0) !== 0x80) return -1;
  }
  return length;
}
