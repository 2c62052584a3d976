// Reads an import file (CSV with a header row, or JSON Lines) into source rows that keep
// every original column, so rejected rows can be written back exactly as they came.
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

export interface ParsedInput {
  format: InputFormat;
  /** CSV header, or for JSON Lines every key in order of first appearance. */
  columns: string[];
  rows: SourceRow[];
  /** CSV only: the delimiter that was given or detected, and whether the file starts with a BOM. */
  delimiter?: string;
  bom?: boolean;
  /** SHA-256 of the exact input bytes: the file's identity for checkpoints and idempotency keys. */
  sha256: string;
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
 * Reads the whole input. Rows are kept in memory because every row is validated before the
 * first batch is sent, and stdin cannot be read twice.
 */
export async function readImportInput(
  chunks: AsyncIterable<Buffer | string>,
  options: ReadOptions = {},
): Promise<ParsedInput> {
  const hash = createHash('sha256');
  const name = options.name ?? 'input';
  const iterator = chunks[Symbol.asyncIterator]();
  // Read ahead to the end of the first line (the CSV header) to sniff format and delimiter.
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes < HEAD_BYTES && !head.some((chunk) => chunk.includes(0x0a))) {
    const next = await iterator.next();
    if (next.done) break;
    const buffer = Buffer.from(next.value);
    head.push(buffer);
    headBytes += buffer.length;
  }
  const headText = Buffer.concat(head).subarray(0, HEAD_BYTES).toString('utf8');
  const format = options.format ?? sniffFormat(headText.slice(0, 256));
  if (format === 'jsonl' && options.delimiter !== undefined) throw usageError('--delimiter applies to CSV input only.');
  const dialect = format === 'csv' ? detectDialect(headText, options.delimiter) : undefined;
  const guard = new TextGuard(name, dialect ? dialect.delimiter.charCodeAt(0) : undefined);

  async function* checked(): AsyncGenerator<Buffer> {
    const take = (buffer: Buffer): Buffer => {
      guard.check(buffer);
      hash.update(buffer);
      return buffer;
    };
    for (const buffer of head) if (buffer.length > 0) yield take(buffer);
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const buffer = Buffer.from(next.value);
      if (buffer.length > 0) yield take(buffer);
    }
    guard.finish();
  }

  const parsed = dialect ? await readCsv(checked(), dialect, name, guard) : await readJsonLines(checked());
  const csv = dialect ? { delimiter: dialect.delimiter, bom: headText.startsWith('\uFEFF') } : {};
  return { format, ...parsed, ...csv, sha256: hash.digest('hex') };
}

async function readCsv(
  chunks: AsyncIterable<Buffer>,
  dialect: Dialect,
  name: string,
  guard: TextGuard,
): Promise<{ columns: string[]; rows: SourceRow[] }> {
  const parser = csvParse({
    bom: true,
    delimiter: dialect.delimiter,
    ...(dialect.sepLine ? { from_line: 2 } : {}),
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
  });
  const rows: SourceRow[] = [];
  let columns: string[] | undefined;
  const source = Readable.from(chunks);
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  try {
    for await (const { info, record } of parser as AsyncIterable<{ info: { lines: number }; record: string[] }>) {
      if (!columns) {
        columns = record.map((name) => name.trim());
        continue;
      }
      const fields: Record<string, unknown> = {};
      columns.forEach((name, i) => {
        fields[name] = record[i] ?? '';
      });
      const row: SourceRow = { line: info.lines, fields };
      if (record.length !== columns.length) {
        row.error = `has ${record.length} fields, the header has ${columns.length}`;
      }
      rows.push(row);
    }
  } catch (error) {
    // After broken quoting a CSV parser cannot know where the next record starts, so
    // skipping would silently swallow rows: stop and say where.
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
  if (!columns)
    throw usageError(
      'The input is empty: expected a CSV header row.',
      'The first line names the columns, e.g. email,first_name,last_name.',
    );
  return { columns, rows };
}

async function readJsonLines(chunks: AsyncIterable<Buffer>): Promise<{ columns: string[]; rows: SourceRow[] }> {
  const decoder = new TextDecoder('utf-8');
  const rows: SourceRow[] = [];
  const columns = new Set<string>();
  let pending = '';
  let line = 0;
  const take = (text: string): void => {
    line += 1;
    const trimmed = (line === 1 ? text.replace(/^\uFEFF/, '') : text).trim();
    if (trimmed === '') return;
    try {
      const value: unknown = JSON.parse(trimmed);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        rows.push({ line, fields: { value: trimmed }, error: 'expected a JSON object' });
        return;
      }
      for (const key of Object.keys(value)) columns.add(key);
      rows.push({ line, fields: value as Record<string, unknown> });
    } catch {
      rows.push({ line, fields: { value: trimmed }, error: 'not valid JSON' });
    }
  };
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n', start)) {
      take(pending.slice(start, newline));
      start = newline + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending.trim() !== '') take(pending);
  return { columns: [...columns], rows };
}
