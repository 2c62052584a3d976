// `loyalty members export`: the whole member list of a brand, streamed as CSV or JSON Lines to
// stdout or a file, so memory stays flat however large the brand is. By default from one unpaged
// list read as it arrives (the SDK's streamMembers); with --per-page, page by page.
import type { WriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { once } from 'node:events';
import type { components } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { openPrivateFile } from '../../private-file.js';
import { requestIdSuffix } from '../../request-log.js';
import { formatCount } from '../../ui/format.js';
import { chunked } from '../common/streamed-input.js';
import { apiFailure } from '../common/api.js';

type MemberListItem = components['schemas']['MemberListItem'];

/** The CSV columns: the fields of the document's MemberListItem, in this order. */
export const EXPORT_COLUMNS = [
  'identifier',
  'email',
  'full_name',
  'last_name',
  'unsubscribed',
  'subscribed_at',
  'phone_number',
  'birth_date',
  'street',
  'house_number',
  'postcode',
  'city',
  'country',
] as const satisfies readonly (keyof MemberListItem)[];

type Holds<T extends true> = T;
/** Compiles only while every field of MemberListItem is a column. */
export type ExportColumnsComplete = Holds<
  Exclude<keyof MemberListItem, (typeof EXPORT_COLUMNS)[number]> extends never ? true : false
>;

export interface ExportOptions {
  format?: string;
  output?: string;
  /** Read page by page, this many members a request (else the whole list in one stream). */
  perPage?: string;
}

/** Members written to the output at once. */
const WRITE_BATCH = 1000;

const NEEDS_QUOTES = /[",\n\r]/;

/**
 * One CSV record as csv-stringify writes it with its defaults (what this export wrote before, and
 * `export.test.ts` compares the two): a field with a comma, quote or line break is quoted, its
 * quotes doubled; null is empty; true is 1 and false empty. About ten times faster per member.
 */
export function csvRecord(values: readonly (string | number | boolean | null | undefined)[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : value ? '1' : '';
    line += (i > 0 ? ',' : '') + (NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  }
  return `${line}\n`;
}

export async function exportMembers(ctx: Context, options: ExportOptions): Promise<void> {
  const brandId = ctx.brand();
  const format =
    options.format ?? (ctx.output.json ? 'jsonl' : options.output?.toLowerCase().endsWith('.jsonl') ? 'jsonl' : 'csv');
  if (format !== 'csv' && format !== 'jsonl') throw usageError(`--format must be csv or jsonl (got "${format}").`);
  if (format === 'csv' && ctx.options.jq !== undefined) throw usageError('--jq filters JSON Lines: drop --format csv.');
  const perPage = options.perPage === undefined ? undefined : Number(options.perPage);
  if (perPage !== undefined && !(Number.isInteger(perPage) && perPage >= 1 && perPage <= 1000))
    throw usageError(`--per-page must be 1 to 1000 (got "${options.perPage}").`);

  // A file of members is personal data: 0600, like the rejects file of an import.
  const target =
    options.output && options.output !== '-'
      ? (await openPrivateFile(resolve(ctx.runtime.cwd, options.output))).createWriteStream()
      : ctx.runtime.stdout;
  const write = async (text: string): Promise<void> => {
    if (!target.write(text)) await once(target, 'drain');
  };
  // The header goes out with the first members (or at the end of an empty list), so a refused
  // request (an unknown brand) leaves stdout empty, as every failed command does.
  let headed = format !== 'csv';
  const head = async (): Promise<void> => {
    if (headed) return;
    headed = true;
    await write(csvRecord(EXPORT_COLUMNS));
  };

  const { iterateMembers, streamMembers, isLoyaltyError } = await import('@loyalty/sdk');
  const toFile = Boolean(options.output && options.output !== '-');
  let written = 0;
  let pending: MemberListItem[] = [];
  let reportedAt = Date.now();
  const flush = async (): Promise<void> => {
    await head();
    let text = '';
    if (format === 'csv')
      for (const member of pending) text += csvRecord(EXPORT_COLUMNS.map((column) => member[column]));
    else text = ctx.output.jsonLinesText(pending);
    written += pending.length;
    pending = [];
    await write(text);
  };
  const stream = perPage === undefined ? streamMembers(ctx.client(), { brandId, signal: ctx.signal }) : undefined;
  const batches = stream
    ? stream.batches()
    : chunked(iterateMembers(ctx.client(), { brandId, perPage, signal: ctx.signal }), perPage ?? WRITE_BATCH);
  const total = () => (stream?.total !== undefined ? ` of ${formatCount(stream.total)}` : '');
  try {
    for await (const batch of batches) {
      for (const member of batch) pending.push(member);
      if (pending.length >= WRITE_BATCH || perPage !== undefined) await flush();
      if (toFile && Date.now() - reportedAt >= 2000) {
        reportedAt = Date.now();
        ctx.output.info(`exported ${formatCount(written + pending.length)}${total()} members…`);
      }
    }
  } catch (error) {
    const interrupted = isLoyaltyError(error) && error.code === 'stream_interrupted' && !ctx.signal.aborted;
    if (interrupted) {
      // What arrived before the list broke off is written, so the count below is what the output holds.
      await flush().catch(() => {});
      if (target !== ctx.runtime.stdout) await closeFile(target as WriteStream).catch(() => {});
    } else if (target !== ctx.runtime.stdout) (target as WriteStream).destroy(); // closes the file
    if (interrupted)
      throw new CliError(
        `Export stopped after ${formatCount(written)}${total()} members. ${error.message}${requestIdSuffix(error.requestId)}`,
        {
          hint: `The ${toFile ? 'file' : 'output'} is incomplete. Run the export again; if a proxy cuts long responses, add --per-page 1000.`,
          cause: error,
        },
      );
    if (isLoyaltyError(error) && !ctx.signal.aborted) throw apiFailure(ctx, error);
    throw error;
  }
  await flush();
  if (target !== ctx.runtime.stdout) await closeFile(target as WriteStream);
  ctx.output.info(
    `Exported ${formatCount(written)} members of ${brandId}${options.output && options.output !== '-' ? ` to ${options.output}` : ''} (${format}).`,
  );
}

async function closeFile(file: WriteStream): Promise<void> {
  file.end();
  await once(file, 'finish');
}
