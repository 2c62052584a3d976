// Writes rejected rows in the input's own format with the original columns plus `error`,
// so the file can be fixed and imported again as it is (the `error` column is not mapped).
// Rows are written as they are found, so a file of any length is checked with flat memory.
// A CSV keeps its delimiter and BOM: a `;` file from Excel comes back as one that Excel opens.
// The rows are personal data: the file is written 0600, also when it already existed.
import { stringify } from 'csv-stringify/sync';
import { type FileHandle, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { openPrivateFile } from '../private-file.js';
import type { InputFormat } from './parse.js';
import type { RejectedRow } from './validate.js';

export function defaultRejectsPath(input: string, format: InputFormat): string {
  const extension = format === 'csv' ? '.csv' : '.jsonl';
  if (input === '-') return `loyalty-import-rejects${extension}`;
  const base = input.replace(/\.(csv|txt|jsonl|ndjson|json)$/i, '');
  return `${base}.rejects${extension}`;
}

export function errorColumnName(columns: readonly string[]): string {
  let name = 'error';
  while (columns.includes(name)) name = `import_${name}`;
  return name;
}

export interface CsvStyle {
  delimiter?: string | undefined;
  bom?: boolean | undefined;
}

/**
 * Writes rejected rows as they are found, so no row is held: the file is opened (0600) at the
 * first one, and rows go out in the order they are added. For JSON Lines the error key is chosen
 * against the keys seen so far (`columns` may grow while the input is read).
 */
export class RejectsWriter {
  readonly path: string;
  count = 0;
  /** Where rows are written: `path`, or beside it until `commit` when the writer replaces a file. */
  readonly #target: string;
  readonly #format: InputFormat;
  readonly #columns: readonly string[];
  readonly #style: CsvStyle;
  #pending = '';
  #handle: Promise<FileHandle> | undefined;
  #writes: Promise<void> = Promise.resolve();

  constructor(
    path: string,
    format: InputFormat,
    columns: readonly string[],
    style: CsvStyle = {},
    { replacing = false } = {},
  ) {
    this.path = path;
    this.#target = replacing ? join(dirname(path), `.${basename(path)}.${process.pid}.partial`) : path;
    this.#format = format;
    this.#columns = columns;
    this.#style = style;
  }

  /** Resolves once the row is written or buffered; a caller that awaits it gets back-pressure. */
  add(row: RejectedRow): Promise<void> {
    if (this.count === 0) this.#pending += this.#head();
    this.count += 1;
    this.#pending += this.#render(row);
    return this.#pending.length >= FLUSH_CHARS ? this.#flush() : Promise.resolve();
  }

  /** Writes what is buffered and closes the file (nothing happens when no row was added); a replacing writer's rows are dropped. */
  async close(): Promise<void> {
    await this.#flush();
    if (this.#handle) await (await this.#handle).close();
    this.#handle = undefined;
    if (this.#target !== this.path) await rm(this.#target, { force: true });
  }

  /** Closes the file and, for a replacing writer, puts it in place of the file it replaces. */
  async commit(): Promise<void> {
    await this.#flush();
    if (this.#handle) await (await this.#handle).close();
    this.#handle = undefined;
    if (this.#target !== this.path && this.count > 0) await rename(this.#target, this.path);
  }

  #head(): string {
    if (this.#format === 'jsonl') return '';
    const header = [...this.#columns, errorColumnName(this.#columns)];
    return (this.#style.bom ? '\uFEFF' : '') + stringify([header], { delimiter: this.#style.delimiter ?? ',' });
  }

  #render(row: RejectedRow): string {
    const error = `line ${row.line}: ${row.error}`;
    if (this.#format === 'jsonl')
      return `${JSON.stringify({ ...row.fields, [errorColumnName(this.#columns)]: error })}\n`;
    const record = [...this.#columns.map((column) => cell(row.fields[column])), error];
    return stringify([record], { delimiter: this.#style.delimiter ?? ',' });
  }

  #flush(): Promise<void> {
    if (this.#pending === '') return this.#writes;
    const text = this.#pending;
    this.#pending = '';
    this.#handle ??= openPrivateFile(this.#target);
    const handle = this.#handle;
    this.#writes = this.#writes.then(async () => {
      await (await handle).write(text);
    });
    return this.#writes;
  }
}

/**
 * Keeps the rejects file in input order while some rows are still being judged: rows the API may
 * yet refuse are in batches in flight, and a row after them waits until they are answered. Only
 * the rows since the oldest unanswered batch are held (a few batches' worth).
 */
export class OrderedRejects {
  readonly writer: RejectsWriter;
  /** Rows not written yet, by line. */
  readonly #held: RejectedRow[] = [];
  #below = Number.POSITIVE_INFINITY;

  constructor(writer: RejectsWriter) {
    this.writer = writer;
  }

  /** Rows added and not yet written. */
  get count(): number {
    return this.writer.count + this.#held.length;
  }

  add(row: RejectedRow): Promise<void> {
    let at = this.#held.length;
    while (at > 0 && (this.#held[at - 1]?.line ?? 0) > row.line) at -= 1;
    this.#held.splice(at, 0, row);
    return this.#release();
  }

  /** Rows from this line on may still be preceded by rows not added yet (Infinity: none). */
  hold(below: number): Promise<void> {
    this.#below = below;
    return this.#release();
  }

  async #release(): Promise<void> {
    while ((this.#held[0]?.line ?? Number.POSITIVE_INFINITY) < this.#below) {
      const row = this.#held.shift();
      if (row) await this.writer.add(row);
    }
  }
}

/** Rows are written in pieces of about this many characters. */
const FLUSH_CHARS = 64 * 1024;

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
