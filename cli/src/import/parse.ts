// Reads an import file (CSV with a header row, or JSON Lines) into source rows that keep
// every original column, so rejected rows can be written back exactly as they came.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parse as csvParse } from 'csv-parse';
import { CliError, usageError } from '../errors.js';

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
  return firstChunk.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/**
 * Reads the whole input. Rows are kept in memory because every row is validated before the
 * first batch is sent, and stdin cannot be read twice.
 */
export async function readImportInput(
  chunks: AsyncIterable<Buffer | string>,
  options: { format?: InputFormat | undefined } = {},
): Promise<ParsedInput> {
  const hash = createHash('sha256');
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  const firstBuffer = first.done ? Buffer.alloc(0) : Buffer.from(first.value);
  const format = options.format ?? sniffFormat(firstBuffer.subarray(0, 256).toString('utf8'));

  async function* hashed(): AsyncGenerator<Buffer> {
    hash.update(firstBuffer);
    if (firstBuffer.length > 0) yield firstBuffer;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const buffer = Buffer.from(next.value);
      hash.update(buffer);
      yield buffer;
    }
  }

  const parsed = format === 'csv' ? await readCsv(hashed()) : await readJsonLines(hashed());
  return { format, ...parsed, sha256: hash.digest('hex') };
}

async function readCsv(chunks: AsyncIterable<Buffer>): Promise<{ columns: string[]; rows: SourceRow[] }> {
  const parser = csvParse({
    bom: true,
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
    const code = (error as { code?: string }).code;
    if (code?.startsWith('CSV_')) {
      throw new CliError(`The CSV cannot be read: ${(error as Error).message}.`, {
        hint: 'Fix the quoting there: a quote inside a field is doubled, "like ""this""".',
      });
    }
    throw error;
  }
  if (!columns) throw usageError('The input is empty: expected a CSV header row.', 'The first line names the columns, e.g. email,first_name,last_name.');
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
