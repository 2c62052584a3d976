// The first pass of an import: every row read, counted and validated, the invalid ones written to
// the rejects file as they are found, and a 32-bit hash of each valid e-mail kept to find the rows
// that may repeat an earlier e-mail. Nothing else is held, so any length is checked in flat memory.
import { GrowingMapping, mapColumns, type ColumnMapping, type ExplicitMapping } from './columns.js';
import { ConsentValues } from './consent-values.js';
import { rm } from 'node:fs/promises';
import { CliError, ExitCode } from '../errors.js';
import { openImportSource, type InputFormat, type ReadOptions } from './parse.js';
import { RejectsWriter } from './rejects.js';
import type { Chunks } from './reread.js';
import { type CandidateRows, DuplicateCandidates } from './seen-emails.js';
import { checkRow } from './validate.js';

export interface CheckedInput {
  format: InputFormat;
  columns: readonly string[];
  delimiter?: string | undefined;
  bom?: boolean | undefined;
  sha256: string;
  mapping: ColumnMapping;
  rows: number;
  /** Rows the check rejected (written to the rejects file). */
  invalid: number;
  /** Rows that may repeat an earlier e-mail (the hash table of the check is not kept). */
  candidates: CandidateRows;
  /** The time subscribed_at was checked against. */
  checkedAt: Date;
}

export interface CheckOptions extends ReadOptions {
  explicit: ExplicitMapping;
  /** Columns not to read (--skip-column). */
  skip?: readonly string[] | undefined;
  /** The rejects file as named (relative to `cwd`), from the input's name and format when not given. */
  rejectsPath: (format: InputFormat) => string;
  now: Date;
  /** The input's size in bytes, when known: once 100,000 rows show the bytes per row (the parser reads up to ~1 MB ahead), the e-mail hashes go into a Bloom filter sized from it. */
  sizeHint?: number | undefined;
  onRows?: (rows: number, invalid: number) => void;
}

/** Reads the input once; returns what it found and the rejects file, still open for the rows found later. */
export async function checkInput(
  chunks: Chunks,
  options: CheckOptions,
): Promise<{ input: CheckedInput; rejects: RejectsWriter }> {
  const source = await openImportSource(chunks, options);
  const skip = options.skip ?? [];
  const mapping =
    source.format === 'csv'
      ? mapColumns(source.columns, options.explicit, skip)
      : new GrowingMapping(source.columns, options.explicit, skip);
  const consent = new ConsentValues(skip);
  const rejects = new RejectsWriter(options.rejectsPath(source.format), source.format, source.columns, source);
  const candidates = new DuplicateCandidates();
  const toMember = mapping.apply.bind(mapping);
  let rows = 0;
  try {
    for await (const row of source.rows) {
      rows += 1;
      if (!row.error) consent.add(mapping.columns, row, source.columns);
      const verdict = checkRow(row, toMember, options.now);
      if (verdict.ok) candidates.add(verdict.user.email);
      else await rejects.add({ line: row.line, fields: row.fields, error: verdict.error });
      if (rows % 10_000 === 0) {
        if (rows === 100_000 && options.sizeHint) candidates.expect((options.sizeHint * rows) / source.bytesRead());
        // stdin: no size. Past a million rows, a filter for ten million (16 MB) instead of a growing table.
        if (rows === 1_000_000 && !options.sizeHint) candidates.expect(10_000_000);
        options.onRows?.(rows, rejects.count);
      }
    }
    // JSON Lines: judged now that every key is known (an e-mail key, each --map column present).
    if (source.format !== 'csv') mapColumns(source.columns, options.explicit, skip);
    consent.judge();
  } catch (error) {
    await rejects.close();
    // Refused before anything was sent: no rejects file from this run is left behind.
    if (rejects.count > 0 && error instanceof CliError && error.exitCode === ExitCode.usage)
      await rm(rejects.path, { force: true });
    throw error;
  }
  options.onRows?.(rows, rejects.count);
  return {
    input: {
      format: source.format,
      columns: source.columns,
      delimiter: source.delimiter,
      bom: source.bom,
      sha256: source.sha256(),
      mapping: source.format === 'csv' ? mapping : mapColumns(source.columns, options.explicit, skip),
      rows,
      invalid: rejects.count,
      candidates: candidates.result(),
      checkedAt: options.now,
    },
    rejects,
  };
}
