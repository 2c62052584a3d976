// `points import`: the input read once, through the members import's reader (CSV or JSON Lines,
// dialect detected, content hash), each row checked on its own.
import { usageError } from '../../errors.js';
import type { Reading } from '../checkpoint.js';
import { openImportSource, type InputFormat } from '../parse.js';
import type { Chunks } from '../reread.js';
import type { RejectedPointsRow } from './plan.js';
import {
  pointsColumns,
  readPointsRow,
  type PointsColumns,
  type PointsMapping,
  type PointsMode,
  type PointsRow,
} from './rows.js';

export interface ReadRequest {
  input: { name: string; chunks: Chunks; format?: InputFormat | undefined; delimiter?: string | undefined };
  mode: PointsMode;
  defaultStorecard?: string | undefined;
  /** Columns named by `--map field=column`. */
  mapping?: PointsMapping | undefined;
}

/** Every row of the input read and checked on its own; the rows that pass are kept (a few hundred bytes each). */
export async function readRows(request: ReadRequest) {
  const source = await openImportSource(request.input.chunks, {
    format: request.input.format,
    delimiter: request.input.delimiter,
    name: request.input.name === '-' ? 'stdin' : request.input.name,
  });
  const rows: PointsRow[] = [];
  const rejected: RejectedPointsRow[] = [];
  let columns: PointsColumns | undefined;
  let count = 0;
  for await (const row of source.rows) {
    if (!columns) {
      const found = pointsColumns(source.columns, request.defaultStorecard, request.mapping);
      if ('problem' in found) throw usageError(`${request.input.name}: ${found.problem}.`);
      columns = found;
    }
    const verdict = readPointsRow(row, count, columns, {
      mode: request.mode,
      defaultStorecard: request.defaultStorecard,
    });
    count += 1;
    if (verdict.ok) rows.push(verdict.row);
    else rejected.push({ line: row.line, fields: row.fields, error: verdict.error });
  }
  return {
    rows,
    rejected,
    count,
    reading: readingOf(columns, request.defaultStorecard),
    sha256: source.sha256(),
    format: source.format,
    columns: source.columns,
    style: { delimiter: source.delimiter, bom: source.bom },
  };
}

/** How the rows were read, for the checkpoint: the column of each field, and the --storecard default. */
function readingOf(columns: PointsColumns | undefined, defaultStorecard: string | undefined): Reading {
  const column = (name: string) => `column ${JSON.stringify(name)}`;
  return {
    member: columns ? columns.member.map(column).join(' or ') : 'none',
    points: columns ? column(columns.points) : 'none',
    storecard: columns?.storecard !== undefined ? column(columns.storecard) : 'none',
    '--storecard': defaultStorecard ?? 'none',
  };
}
