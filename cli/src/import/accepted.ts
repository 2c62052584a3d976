// The second (and any later) pass of an import: the input read again, each row given the same
// verdict as in the check (a resumed import checks subscribed_at against the first run's time), and
// the rows that repeat an earlier e-mail told apart exactly. Yields the accepted rows in input
// order, with their position among all rows (batches are cut by it).
import { openImportSource } from './parse.js';
import type { CheckedInput } from './check.js';
import type { OrderedRejects } from './rejects.js';
import type { Chunks } from './reread.js';
import { DuplicateEmails } from './seen-emails.js';
import { checkRow, type AcceptedRow } from './validate.js';

export interface RereadOptions {
  name: string;
  /** subscribed_at is checked against this (a resumed import keeps the first run's time). */
  validatedAt: Date;
  /** Where every rejected row goes, in input order (this pass writes the whole file again); none in a repeat pass. */
  rejects?: OrderedRejects | undefined;
  /** Rows of the input already rejected by the API in an earlier run, by line, to write to the rejects file again. */
  earlierRejects?: ReadonlyMap<number, string> | undefined;
}

export class InputChanged extends Error {}

export async function* acceptedRows(
  chunks: Chunks,
  checked: CheckedInput,
  options: RereadOptions,
): AsyncGenerator<AcceptedRow> {
  const source = await openImportSource(chunks, {
    format: checked.format,
    delimiter: checked.delimiter,
    name: options.name,
  });
  const duplicates = new DuplicateEmails(checked.candidates.hashes);
  const apply = checked.mapping.apply.bind(checked.mapping);
  const { rejects } = options;
  let position = 0;
  for await (const row of source.rows) {
    const at = position++;
    const earlier = options.earlierRejects?.get(row.line);
    if (earlier !== undefined) await rejects?.add({ line: row.line, fields: row.fields, error: earlier });
    const verdict = checkRow(row, apply, options.validatedAt);
    if (!verdict.ok) {
      await rejects?.add({ line: row.line, fields: row.fields, error: verdict.error });
      continue;
    }
    const first = duplicates.seen(verdict.user.email, row.line);
    if (first !== undefined) {
      await rejects?.add({
        line: row.line,
        fields: row.fields,
        error: `duplicate of ${verdict.user.email} on line ${first}`,
      });
      continue;
    }
    if (earlier === undefined) yield { position: at, line: row.line, fields: row.fields, user: verdict.user };
  }
  if (position !== checked.rows || source.sha256() !== checked.sha256)
    throw new InputChanged(`${options.name} changed while it was being imported.`);
}
