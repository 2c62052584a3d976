// `loyalty points import`: wires the points import to the API, the progress display and Ctrl-C.
import { resolve } from 'node:path';
import { retryNote, watchRetries } from '../../api-retries.js';
import type { Context } from '../../context.js';
import { PartialSuccess, usageError } from '../../errors.js';
import { parseMapOptions } from '../../import/columns.js';
import { parseDelimiter } from '../../import/csv-dialect.js';
import { formatFromName, type InputFormat } from '../../import/parse.js';
import type { PlanCounts } from '../../import/points/plan.js';
import { POINTS_FIELDS, type PointsMode } from '../../import/points/rows.js';
import { runPointsImport, type PointsSummary } from '../../import/points/run.js';
import { pacingNote, watchPacing } from '../../pacing.js';
import { formatCount } from '../../ui/format.js';
import { liveView } from '../../ui/live.js';
import type { PointsProgressView } from '../../ui/points-line.js';
import { pointsImportReporter } from '../../ui/progress-displays.js';
import { openInput } from '../common/inputs.js';
import { pointsApi } from './import-api.js';

export interface PointsImportOptions {
  add?: boolean;
  set?: boolean;
  storecard?: string;
  format?: string;
  delimiter?: string;
  map: string[];
  dryRun?: boolean;
  resume?: boolean;
  restart?: boolean;
  rejects?: string;
  checkpoint?: string;
  concurrency: string;
  progress: boolean;
}

function modeOf(options: PointsImportOptions): PointsMode {
  if (options.add && options.set) throw usageError('--add and --set exclude each other.');
  return options.set ? 'set' : 'add';
}

const planLines = (plan: PlanCounts, rejectsFile?: string | null): Array<[string, number, string?]> => [
  ['created', plan.created],
  ['adjusted', plan.adjusted],
  ['unchanged', plan.unchanged],
  ['rejected', plan.rejected, rejectsFile ?? undefined],
];

function table(rows: Array<[string, number, string?]>, bold: (s: string) => string): string[] {
  const width = Math.max(...rows.map(([, n]) => formatCount(n).length));
  return rows.map(
    ([label, n, file]) => `  ${label.padEnd(10)}${bold(formatCount(n).padStart(width))}${file ? `  → ${file}` : ''}`,
  );
}

function printSummary(ctx: Context, summary: PointsSummary, brandId: string): void {
  ctx.output.result(summary, () => {
    const head = summary.dry_run
      ? `Checked ${summary.file}: ${formatCount(summary.rows)} rows, --${summary.mode} (dry run, nothing sent).`
      : `Imported the points of ${summary.file} into ${brandId} (--${summary.mode}) in ${(summary.duration_ms / 1000).toFixed(1)}s${summary.resumed_batches ? `, resumed after ${summary.resumed_batches} batches` : ''}.`;
    return [head, ...table(planLines(summary, summary.rejects_file), ctx.output.out.bold)].join('\n');
  });
}

export async function importPoints(ctx: Context, file: string, options: PointsImportOptions): Promise<void> {
  const mode = modeOf(options);
  const brandId = ctx.brand();
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32)
    throw usageError(`--concurrency must be a whole number from 1 to 32 (got "${options.concurrency}").`);
  if (options.resume && options.restart) throw usageError('--resume and --restart exclude each other.');
  const format = options.format ? parseFormat(options.format) : file === '-' ? undefined : formatFromName(file);
  const delimiter = options.delimiter === undefined ? undefined : parseDelimiter(options.delimiter);
  const mapping = parseMapOptions(options.map, POINTS_FIELDS);
  const chunks = await openInput(ctx, file);
  ctx.client(); // missing credentials fail before the file is read

  const name = file === '-' ? 'stdin' : file;
  const initial: PointsProgressView = {
    phase: 'reading',
    rows: 0,
    rejected: 0,
    rowsTotal: 0,
    rowsDone: 0,
    created: 0,
    adjusted: 0,
    unchanged: 0,
    rowsThisRun: 0,
    startedAt: Date.now(),
  };
  const reporter = await pointsImportReporter(
    { stream: ctx.runtime.stderr, env: ctx.runtime.env, plain: !options.progress },
    name,
    initial,
  );
  let last = initial;
  const held: string[] = [];
  const log = (message: string): void => {
    if (liveView.active) held.push(message);
    else ctx.output.info(message);
  };
  const redraw = (): void => reporter.update({ ...last, waiting: pacingNote(), retrying: retryNote() });
  const unwatchPacing = watchPacing(redraw);
  const unwatchRetries = watchRetries(redraw);
  let summary: PointsSummary;
  try {
    summary = await runPointsImport({
      input: { name: file, chunks, format, delimiter },
      commandLine: ctx.commandLine,
      mode,
      defaultStorecard: options.storecard,
      mapping,
      brandId,
      apiUrl: ctx.apiUrl,
      configDir: ctx.config.configDir,
      concurrency,
      dryRun: Boolean(options.dryRun),
      resume: Boolean(options.resume),
      restart: Boolean(options.restart),
      checkpointPath: options.checkpoint ? resolve(ctx.runtime.cwd, options.checkpoint) : undefined,
      rejectsPath: options.rejects,
      cwd: ctx.runtime.cwd,
      signal: ctx.signal,
      api: pointsApi(ctx, brandId),
      onPlan: (plan) => {
        if (options.dryRun) return;
        log(['Plan:', ...table(planLines(plan), (s) => s)].join('\n'));
      },
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
  if (summary.rejected > 0)
    throw new PartialSuccess(
      `${formatCount(summary.rejected)} ${summary.rejected === 1 ? 'row was' : 'rows were'} rejected; they are in ${summary.rejects_file}.`,
      `Fix them there and import that file: loyalty points import ${summary.rejects_file} --${mode}`,
    );
}

function parseFormat(value: string): InputFormat {
  if (value === 'csv' || value === 'jsonl') return value;
  throw usageError(`--format must be csv or jsonl (got "${value}").`);
}
