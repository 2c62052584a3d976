// Reads an import file (CSV with a header row, or JSON Lines) row by row into source rows that
// keep every original column, so rejected rows can be written back exactly as they came.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parse as csvParse } from 'csv-parse';
import { CliError, usageError } from '../errors.js';
import { csvProblem, detectDialect, type Dialect } from './csv-dialect.js';
import { TextGuard } from './text.js';

export type InputFormat = 'csv' | 'jsonl';

export interface SourceRow {
  /** Line in the input where the record ends (1-based; the CSV header is line 1). */
  line: number;
  /** The record as read, column name → value, in input column order. */
  fields: Record<string, unknown>;
  /** Set when the record itself could not be read (bad JSON, wrong number of CSV fields). */
  error?: string;
}

/**
 * An import input being read: rows are parsed as they are iterated, so a file of any size is
 * read with flat memory. `rows` can be iterated once; `sha256()` is known after the last row.
 */
export interface ImportSource {
  format: InputFormat;
  /** CSV header, or for JSON Lines every key so far, in order of first appearance. */
  readonly columns: readonly string[];
  /** CSV only: the delimiter that was given or detected, and whether the file starts with a BOM. */
  delimiter?: string;
  bom?: boolean;
  rows: AsyncIterable<SourceRow>;
  /** SHA-256 of the exact input bytes (the file's identity for checkpoints and idempotency keys), once read. */
  sha256(): string;
  /** Bytes handed to the parser so far (it reads a little ahead of the rows). */
  bytesRead(): number;
}

export function formatFromName(name: string): InputFormat | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('.csv') || lower.endsWith('.txt')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson') || lower.endsWith('.json')) return 'jsonl';
  return undefined;
}

/** Used for stdin and unknown extensions: JSON Lines start with `{`. */
export function sniffFormat(firstChunk: string): InputFormat {
  return firstChunk
    .replace(/^\uFEFF/, '')
    .trimStart()
    .startsWith('{')
    ? 'jsonl'
    : 'csv';
}

/** How much of the input is read ahead to sniff the format and the CSV delimiter. */
const HEAD_BYTES = 64 * 1024;

export interface ReadOptions {
  format?: InputFormat | undefined;
  /** CSV delimiter; detected from the header line when not given. */
  delimiter?: string | undefined;
  /** The input as the user named it, for error messages ("stdin" for -). */
  name?: string | undefined;
}

/**
 * Opens the input for reading row by row. Format and CSV header are known when this resolves;
 * the rows are parsed as they are iterated.
 */
export async function openImportSource(
  chunks: AsyncIterable<Buffer | string>,
  options: ReadOptions = {},
): Promise<ImportSource> {
  const hash = createHash('sha256');
  const name = options.name ?? 'input';
  const iterator = chunks[Symbol.asyncIterator]();
  // Read ahead to the end of the first line (the CSV header) to sniff format and delimiter.
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < HEAD_BYTES && !head.some((chunk) => chunk.includes(0x0a))) {
    const next = await iterator.next();
    if (next.done) break;
    const buffer = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    head.push(buffer);
    headBytes += buffer.length;
  }
  const headText = Buffer.concat(head).subarray(0, HEAD_BYTES).toString('utf8');
  const format = options.format ?? sniffFormat(headText.slice(0, 256));
  if (format === 'jsonl' && options.delimiter !== undefined) throw usageError('--delimiter applies to CSV input only.');
  const dialect = format === 'csv' ? detectDialect(headText, options.delimiter) : undefined;
  const guard = new TextGuard(name, dialect ? dialect.delimiter.charCodeAt(0) : undefined);
  let digest: string | undefined;
  let bytes = 0;

  async function* checked(): AsyncGenerator<Buffer> {
    const take = (buffer: Buffer): Buffer => {
      guard.check(buffer);
      hash.update(buffer);
      bytes += buffer.length;
      return buffer;
    };
    for (const buffer of head) if (buffer.length > 0) yield take(buffer);
    head.length = 0;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const buffer = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      if (buffer.length > 0) yield take(buffer);
    }
    guard.finish();
    digest = hash.digest('hex');
  }
  const sha256 = (): string => {
    if (digest === undefined) throw new Error('Internal error: the input has not been read to its end');
    return digest;
  };

  if (!dialect) {
    const columns: string[] = [];
    return { format, columns, rows: readJsonLines(checked(), columns), sha256, bytesRead: () => bytes };
  }
  const csv = await openCsv(checked(), dialect, name, guard);
  return {
    format,
    ...csv,
    delimiter: dialect.delimiter,
    bom: headText.startsWith('\uFEFF'),
    sha256,
    bytesRead: () => bytes,
  };
}

async function openCsv(
  chunks: AsyncIterable<Buffer>,
  dialect: Dialect,
  name: string,
  guard: TextGuard,
): Promise<{ columns: string[]; rows: AsyncIterable<SourceRow> }> {
  const parser = csvParse({
    bom: true,
    delimiter: dialect.delimiter,
    ...(dialect.sepLine ? { from_line: 2 } : {}),
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
  });
  const source = Readable.from(chunks);
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  type Parsed = { info: { lines: number }; record: string[] };
  const records = (parser as AsyncIterable<Parsed>)[Symbol.asyncIterator]();
  // After broken quoting a CSV parser cannot know where the next record starts, so
  // skipping would silently swallow rows: stop and say where.
  const next = async (): Promise<IteratorResult<Parsed>> => {
    try {
      return await records.next();
    } catch (error) {
      if (error instanceof CliError) throw error;
      const problem = error as { code?: string; lines?: number; field?: string; message: string };
      if (problem.code?.startsWith('CSV_') || problem.code === 'INVALID_OPENING_QUOTE') {
        throw csvProblem(problem, {
          name,
          delimiter: dialect.delimiter,
          lineText: (line) => guard.lineText(line),
          openQuote: guard.openQuote(),
        });
      }
      throw error;
    }
  };
  const header = await next();
  if (header.done)
    throw usageError(
      'The input is empty: expected a CSV header row.',
      'The first line names the columns, e.g. email,first_name,last_name.',
    );
  const columns = header.value.record.map((column) => column.trim());
  async function* rows(): AsyncGenerator<SourceRow> {
    for (let item = await next(); !item.done; item = await next()) {
      const { info, record } = item.value;
      const fields: Record<string, unknown> = {};
      columns.forEach((column, i) => {
        fields[column] = record[i] ?? '';
      });
      const row: SourceRow = { line: info.lines, fields };
      if (record.length !== columns.length) row.error = `has ${record.length} fields, the header has ${columns.length}`;
      yield row;
    }
  }
  return { columns, rows: rows() };
}

/** One object per line; `columns` collects the keys in order of first appearance as rows are read. */
async function* readJsonLines(chunks: AsyncIterable<Buffer>, columns: string[]): AsyncGenerator<SourceRow> {
  const decoder = new TextDecoder('utf-8');
  const known = new Set<string>();
  let pending = '';
  let line = 0;
  const take = (text: string): SourceRow | undefined => {
    line += 1;
    const trimmed = (line === 1 ? text.replace(/^\uFEFF/, '') : text).trim();
    if (trimmed === '') return undefined;
    try {
      const value: unknown = JSON.parse(trimmed);
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        return { line, fields: { value: trimmed }, error: 'expected a JSON object' };
      for (const key of Object.keys(value)) {
        if (known.has(key)) continue;
        known.add(key);
        columns.push(key);
      }
      return { line, fields: value as Record<string, unknown> };
    } catch {
      return { line, fields: { value: trimmed }, error: 'not valid JSON' };
    }
  };
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n', start)) {
      const row = take(pending.slice(start, newline));
      if (row) yield row;
      start = newline + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending.trim() !== '') {
    const row = take(pending);
    if (row) yield row;
  }
}
