// The values of the consent columns over the whole input, judged before anything is sent: a
// column read as consent whose values are not yes/no answers at all ("weekly", dates) is not a
// consent column as read, and importing it would drop every opt-out in it. A few odd values among
// yes/no answers only reject their rows (validate.ts). And a column that is not read but says
// "unsubscribed" (or "abgemeldet", "dado de baja" …) in a cell, whatever its header ("Status"),
// holds opt-outs: it stops the import too.
import { usageError } from '../errors.js';
import { type ImportField, shellFlag } from './columns.js';
import { readConsentCell } from './yes-no.js';

interface Tally {
  field: 'unsubscribed' | 'subscribed';
  known: number;
  /** The first values that are neither yes nor no, with their line. */
  unknown: Array<{ value: unknown; line: number }>;
}

const EXAMPLES = 3;

export class ConsentValues {
  readonly #columns = new Map<string, Tally>();
  /** Columns not read whose cells say "unsubscribed" in some language: the first such cell. */
  readonly #unreadOptOuts = new Map<string, { value: string; line: number }>();
  readonly #skip: readonly string[];

  constructor(skip: readonly string[] = []) {
    this.#skip = skip;
  }

  add(
    mapping: ReadonlyMap<string, ImportField>,
    row: { line: number; fields: Record<string, unknown> },
    columns: readonly string[] = [],
  ): void {
    for (const column of columns) {
      if (mapping.has(column) || this.#skip.includes(column) || this.#unreadOptOuts.has(column)) continue;
      const value = row.fields[column];
      // Cheap first: a state is a short word or two.
      if (typeof value !== 'string' || value.length > 20 || value.length < 4) continue;
      const cell = readConsentCell(value);
      if (cell.kind === 'state' && cell.unsubscribed) this.#unreadOptOuts.set(column, { value, line: row.line });
    }
    for (const [column, field] of mapping) {
      if (field !== 'unsubscribed' && field !== 'subscribed') continue;
      let tally = this.#columns.get(column);
      if (!tally) {
        tally = { field, known: 0, unknown: [] };
        this.#columns.set(column, tally);
      }
      const cell = readConsentCell(row.fields[column]);
      if (cell.kind === 'answer' || cell.kind === 'state') tally.known += 1;
      else if (cell.kind === 'unknown' && tally.unknown.length < EXAMPLES)
        tally.unknown.push({ value: row.fields[column], line: row.line });
    }
  }

  /** Throws a usage error for the first consent column none of whose values is a yes or a no. */
  judge(): void {
    for (const [column, { value, line }] of this.#unreadOptOuts) {
      throw usageError(
        `The column "${column}" says "${value}" on line ${line} but is not read; nothing was sent.`,
        `Say how to read it: ${shellFlag('--map', `unsubscribed=${column}`)} if it holds opt-outs, ` +
          `or ${shellFlag('--skip-column', column)} if it is not about consent.`,
      );
    }
    for (const [column, tally] of this.#columns) {
      if (tally.known > 0 || tally.unknown.length === 0) continue;
      const shown = tally.unknown
        .map(({ value, line }) => `${typeof value === 'string' ? `"${value}"` : JSON.stringify(value)} on line ${line}`)
        .join(', ');
      throw usageError(
        `The column "${column}" is read as consent (${tally.field}), but none of its values is a yes or a no (${shown}); nothing was sent.`,
        `Write yes or no there (ja/nein, oui/non, ja/nee, sí/no, x, 1/0, true/false), ` +
          `name the consent column with ${shellFlag('--map', `${tally.field}=<column>`)}, ` +
          `or pass ${shellFlag('--skip-column', column)} if it is not about consent.`,
      );
    }
  }
}
