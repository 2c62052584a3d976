// The values of the consent columns over the whole input, judged before anything is sent: a
// column read as consent whose values are not yes/no answers at all ("weekly", dates) is not a
// consent column as read, and importing it would drop every opt-out in it. A few odd values among
// yes/no answers only reject their rows (validate.ts).
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

  add(mapping: ReadonlyMap<string, ImportField>, row: { line: number; fields: Record<string, unknown> }): void {
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
