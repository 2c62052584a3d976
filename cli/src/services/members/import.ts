// `loyalty members import`: wires the import pipeline to the API, the progress display and Ctrl-C.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { hasErrorCode } from '../../error-codes.js';
import { PartialSuccess, usageError } from '../../errors.js';
import { MAX_BATCH_SIZE } from '../../import/batch.js';
import { parseMapOptions } from '../../import/columns.js';
import { parseDelimiter } from '../../import/csv-dialect.js';
import { formatFromName, type InputFormat } from '../../import/parse.js';
import { runImport, startingProgress, type ImportSummary } from '../../import/run.js';
import type { SendSignups } from '../../import/send-signups.js';
import { retryNote, watchRetries } from '../../api-retries.js';
import { pacingNote, watchPacing } from '../../pacing.js';
import { formatCount, type ImportProgressView } from '../../ui/format.js';
import { liveView } from '../../ui/live.js';
import { importReporter } from '../../ui/progress-displays.js';
import { apiFailure, dataOf, idempotencyHeader, request } from '../common/api.js';
import { brandMembers, memberUpdateSender } from './import-update.js';
import { openInput } from '../common/inputs.js';

export interface ImportOptions {
  format?: string;
  delimiter?: string;
  map: string[];
  skipColumn: string[];
  batchSize: string;
  concurrency: string;
  dryRun?: boolean;
  update?: boolean;
  resume?: boolean;
  restart?: boolean;
  rejects?: string;
  checkpoint?: string;
  progress: boolean;
}

function integer(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw usageError(`${flag} must be a whole number from ${min} to ${max} (got "${value}").`);
  return n;
}

/** POST /members/signups for one batch; a 422 that names rows comes back as row errors. */
export function signupSender(ctx: Context, brandId: string): SendSignups {
  return async (users, { idempotencyKey, signal }) => {
    const result = await request(
      ctx,
      (api, signal) =>
        api.POST('/members/signups', {
          params: { header: idempotencyHeader(idempotencyKey) },
          body: { brand_id: brandId, users },
          signal,
        }),
      { signal },
    );
    const error = toLoyaltyError(result);
    if (!error) {
      const { new: created, found } = dataOf(ctx, result).data;
      return { ok: true, new: Object.keys(created).length, found: Object.keys(found).length };
    }
    if (error.status === 422 && hasErrorCode(error, 'validation_failed') && error.fields) {
      const rowErrors = new Map<number, string>();
      for (const [field, messages] of Object.entries(error.fields)) {
        const match = /^users\.(\d+)(?:\.(.+))?$/.exec(field);
        if (!match) continue;
        const index = Number(match[1]);
        const text = `${match[2] ?? 'row'}: ${messages.join(' ')}`;
        rowErrors.set(index, rowErrors.has(index) ? `${rowErrors.get(index)}; ${text}` : text);
      }
      if (rowErrors.size > 0) return { ok: false, message: error.message, rowErrors };
    }
    throw apiFailure(ctx, error);
  };
}

/** The --update counts of a summary (none without --update). */
const updateRows = (
  summary: ImportSummary,
  keys: Array<'created' | 'updated' | 'unchanged'>,
): Array<[string, number]> => keys.flatMap((key) => (summary[key] === undefined ? [] : [[key, summary[key]]]));

function printSummary(ctx: Context, summary: ImportSummary, brandId: string): void {
  ctx.output.result(summary, () => {
    const { out } = ctx.output;
    const seconds = (summary.duration_ms / 1000).toFixed(1);
    const head = summary.dry_run
      ? `Checked ${summary.file}: ${formatCount(summary.rows)} rows, ${formatCount(summary.rows - summary.rejected)} valid, in ${summary.batches} batches (dry run, nothing sent).`
      : `Imported ${summary.file} into ${brandId} in ${seconds}s (${formatCount(summary.rows_per_second)} rows/s${summary.resumed_batches ? `, resumed after ${summary.resumed_batches} batches` : ''}).`;
    const rows: Array<[string, number, string?]> = summary.dry_run
      ? [
          ...updateRows(summary, ['created', 'updated', 'unchanged']),
          ['rejected', summary.rejected, summary.rejects_file ?? undefined],
        ]
      : [
          ['new', summary.new],
          ['found', summary.found],
          ...updateRows(summary, ['updated']),
          ['rejected', summary.rejected, summary.rejects_file ?? undefined],
        ];
    const width = Math.max(...rows.map(([, n]) => formatCount(n).length));
    const labelWidth = Math.max(...rows.map(([label]) => label.length + 1));
    return [
      head,
      ...rows.map(
        ([label, n, file]) =>
          `  ${label.padEnd(labelWidth)}${out.bold(formatCount(n).padStart(width))}${file ? `  → ${file}` : ''}`,
      ),
    ].join('\n');
  });
}

export async function importMembers(ctx: Context, file: string, options: ImportOptions): Promise<void> {
  const brandId = ctx.brand();
  const format = options.format ? parseFormat(options.format) : file === '-' ? undefined : formatFromName(file);
  const batchSize = integer(options.batchSize, '--batch-size', 1, MAX_BATCH_SIZE);
  const concurrency = integer(options.concurrency, '--concurrency', 1, 8);
  if (options.resume && options.restart) throw usageError('--resume and --restart exclude each other.');
  const mapping = parseMapOptions(options.map);
  const delimiter = options.delimiter === undefined ? undefined : parseDelimiter(options.delimiter);
  if (delimiter !== undefined && format === 'jsonl') throw usageError('--delimiter applies to CSV input only.');
  const chunks = await openInput(ctx, file);
  // Fail on missing credentials before reading a large file.
  if (!options.dryRun || options.update) ctx.client();

  const initial = startingProgress(Date.now());
  const reporter = await importReporter(
    { stream: ctx.runtime.stderr, env: ctx.runtime.env, plain: !options.progress },
    file === '-' ? 'stdin' : file,
    initial,
  );
  let last: ImportProgressView = initial;
  let summary: ImportSummary;
  // A line written while the live view is drawn would be torn by its next frame: hold it.
  const held: string[] = [];
  const log = (message: string): void => {
    if (liveView.active) held.push(message);
    else ctx.output.info(message);
  };
  // A wait for the rate limit can last most of a minute with no batch answered: show it as it starts.
  const redraw = (): void => reporter.update({ ...last, waiting: pacingNote(), retrying: retryNote() });
  const unwatchPacing = watchPacing(redraw);
  const unwatchRetries = watchRetries(redraw);
  try {
    summary = await runImport({
      commandLine: ctx.commandLine,
      input: {
        name: file,
        chunks,
        reopen: file === '-' ? undefined : () => openInput(ctx, file),
        size: file === '-' ? undefined : (await stat(resolve(ctx.runtime.cwd, file))).size,
        format,
        delimiter,
      },
      brandId,
      apiUrl: ctx.apiUrl,
      configDir: ctx.config.configDir,
      batchSize,
      concurrency,
      mapping,
      skipColumns: options.skipColumn,
      dryRun: Boolean(options.dryRun),
      resume: Boolean(options.resume),
      restart: Boolean(options.restart),
      checkpointPath: options.checkpoint ? resolve(ctx.runtime.cwd, options.checkpoint) : undefined,
      cwd: ctx.runtime.cwd,
      rejectsPath: options.rejects,
      signal: ctx.signal,
      sendSignups: signupSender(ctx, brandId),
      update: options.update
        ? {
            brandMembers: (signal) => brandMembers(ctx, brandId, signal),
            send: memberUpdateSender(ctx, brandId),
          }
        : undefined,
      onProgress: (progress) => {
        last = progress;
        reporter.update({ ...progress, waiting: pacingNote(), retrying: retryNote() });
      },
      log,
    });
  } finally {
    unwatchPacing();
    unwatchRetries();
    await reporter.finish(last);
    for (const message of held) ctx.output.info(message);
  }
  printSummary(ctx, summary, brandId);
  if (summary.rejected > 0) {
    throw new PartialSuccess(
      `${formatCount(summary.rejected)} ${summary.rejected === 1 ? 'row was' : 'rows were'} rejected; they are in ${summary.rejects_file}.`,
      `Fix them there and import that file: loyalty members import ${summary.rejects_file}`,
    );
  }
}

function parseFormat(value: string): InputFormat {
  if (value === 'csv' || value === 'jsonl') return value;
  throw usageError(`--format must be csv or jsonl (got "${value}").`);
}
