// Writes rejected rows in the input's own format with the original columns plus `error`,
// so the file can be fixed and imported again as it is (the `error` column is not mapped).
// A CSV keeps its delimiter and BOM: a `;` file from Excel comes back as one that Excel opens.
// The rows are personal data: the file is written 0600, also when it already existed.
import { stringify } from 'csv-stringify/sync';
import { writePrivateData } from '../private-file.js';
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

export function renderRejects(
  format: InputFormat,
  columns: readonly string[],
  rows: readonly RejectedRow[],
  style: CsvStyle = {},
): string {
  const sorted = [...rows].sort((a, b) => a.line - b.line);
  const errorColumn = errorColumnName(columns);
  if (format === 'jsonl') {
    return sorted
      .map((row) => `${JSON.stringify({ ...row.fields, [errorColumn]: `line ${row.line}: ${row.error}` })}\n`)
      .join('');
  }
  const header = [...columns, errorColumn];
  const records = sorted.map((row) => [
    ...columns.map((column) => cell(row.fields[column])),
    `line ${row.line}: ${row.error}`,
  ]);
  return (style.bom ? '\uFEFF' : '') + stringify([header, ...records], { delimiter: style.delimiter ?? ',' });
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export async function writeRejects(
  path: string,
  format: InputFormat,
  columns: readonly string[],
  rows: readonly RejectedRow[],
  style?: CsvStyle,
): Promise<void> {
  await writePrivateData(path, renderRejects(format, columns, rows, style));
}
