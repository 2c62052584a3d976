// The import as a whole, in two streaming passes over the input so that a file of any length is
// imported with flat memory: check every row (rejects written, duplicates found as candidates),
// then read again and send batches a few at a time, checkpointing each acknowledged batch.
import { resolve } from 'node:path';
import { CliError, InterruptedError } from '../errors.js';
import { acceptedRows, InputChanged } from './accepted.js';
import type { ImportIdentity } from './batch.js';
import { checkInput, type CheckedInput } from './check.js';
import {
  CheckpointWriter,
  defaultCheckpointPath,
  readCheckpoint,
  requireSameReading,
  type Checkpoint,
  type Reading,
} from './checkpoint.js';
import type { ExplicitMapping } from './columns.js';
import { continueCommand, shellWord } from './rerun.js';
import type { InputFormat } from './parse.js';
import { defaultRejectsPath, OrderedRejects, RejectsWriter } from './rejects.js';
import { rereadable, type Chunks, type Rereadable } from './reread.js';
import { sendBatches } from './send.js';
import type { SendSignups } from './send-signups.js';
import { applyUpdates, planUpdates, type BrandMember, type SendMemberUpdates } from './update.js';
import type { AcceptedRow } from './validate.js';

export interface ImportProgress {
  phase: 'reading' | 'sending' | 'done';
  rows: number;
  rejected: number;
  batchesTotal: number;
  batchesDone: number;
  /** Rows in acknowledged batches (including earlier runs). */
  rowsDone: number;
  rowsTotal: number;
  new: number;
  found: number;
  /** Rows acknowledged by this run, for the rate. */
  rowsThisRun: number;
  startedAt: number;
}

/** Where an import starts: reading, nothing counted yet. */
export function startingProgress(startedAt: number): ImportProgress {
  return {
    phase: 'reading',
    rows: 0,
    rejected: 0,
    batchesTotal: 0,
    batchesDone: 0,
    rowsDone: 0,
    rowsTotal: 0,
    new: 0,
    found: 0,
    rowsThisRun: 0,
    startedAt,
  };
}

export interface ImportRequest {
  input: {
    name: string;
    chunks: Chunks;
    /** The input's size in bytes, when known (sizes the duplicate check's table). */
    size?: number | undefined;
    /** Opens the input again for the second pass; without it (stdin) the first pass keeps a private copy. */
    reopen?: (() => Promise<Chunks>) | undefined;
    format?: InputFormat | undefined;
    delimiter?: string | undefined;
  };
  brandId: string;
  apiUrl: string;
  configDir: string;
  batchSize: number;
  concurrency: number;
  mapping?: ExplicitMapping;
  /** The words of the run as typed after `loyalty`: the "Continue with" line repeats them. */
  commandLine?: readonly string[] | undefined;
  /** Columns not to read (--skip-column), also when they look like consent. */
  skipColumns?: readonly string[] | undefined;
  dryRun?: boolean;
  resume?: boolean;
  restart?: boolean;
  checkpointPath?: string | undefined;
  rejectsPath?: string | undefined;
  /** Relative rejects paths are written relative to this directory (default: the process's). */
  cwd?: string;
  signal: AbortSignal;
  sendSignups: SendSignups;
  /** `--update`: after the sign-ups, existing members whose names differ are updated. */
  update?: ImportUpdate | undefined;
  onProgress?: (progress: ImportProgress) => void;
  log?: (message: string) => void;
  now?: () => Date;
}

export interface ImportUpdate {
  /** The brand's members now, by lower-case e-mail. */
  brandMembers: (signal: AbortSignal) => Promise<Map<string, BrandMember>>;
  send: SendMemberUpdates;
}

export interface ImportSummary {
  file: string;
  format: InputFormat;
  rows: number;
  batches: number;
  new: number;
  found: number;
  rejected: number;
  rejected_invalid: number;
  rejected_by_api: number;
  resumed_batches: number;
  dry_run: boolean;
  rejects_file: string | null;
  duration_ms: number;
  rows_per_second: number;
  /**
   * With --update: members updated (in every run of a resumed import); in a dry run also the rows
   * that are not members of the brand yet (created) and those whose names already match (unchanged).
   */
  updated?: number;
  unchanged?: number;
  created?: number;
}

export async function runImport(request: ImportRequest): Promise<ImportSummary> {
  const input = await rereadable(request.input.chunks, request.input.reopen);
  try {
    return await importPasses(request, input);
  } finally {
    await input.dispose();
  }
}

async function importPasses(request: ImportRequest, reading: Rereadable): Promise<ImportSummary> {
  const startedAt = Date.now();
  const now = request.now ?? (() => new Date());
  const log = request.log ?? (() => undefined);
  const progress = startingProgress(startedAt);
  const report = (): void => request.onProgress?.({ ...progress });
  report();
  const name = request.input.name === '-' ? 'stdin' : request.input.name;
  let rejectsPath = '';

  const { input, rejects } = await checkInput(reading.first, {
    format: request.input.format,
    delimiter: request.input.delimiter,
    name,
    explicit: request.mapping ?? {},
    skip: request.skipColumns,
    rejectsPath: (format) => {
      rejectsPath = request.rejectsPath ?? defaultRejectsPath(request.input.name, format);
      return resolve(request.cwd ?? '.', rejectsPath);
    },
    now: now(),
    sizeHint: request.input.size,
    onRows: (rows, rejected) => {
      Object.assign(progress, { rows, rejected });
      report();
    },
  });
  await rejects.close();
  // A pass that reads the whole input again writes the whole rejects file again, in input order,
  // and puts it in place of the check's only when it has read to the end.
  const again = new OrderedRejects(
    new RejectsWriter(rejects.path, input.format, input.columns, input, { replacing: true }),
  );
  try {
    const summary = await afterCheck(request, reading, input, again, {
      progress,
      report,
      log,
      rejectsPath,
      startedAt,
      name,
    });
    await again.writer.commit();
    return summary;
  } finally {
    await again.writer.close();
  }
}

interface RunState {
  progress: ImportProgress;
  report: () => void;
  log: (message: string) => void;
  rejectsPath: string;
  startedAt: number;
  name: string;
}

async function afterCheck(
  request: ImportRequest,
  reading: Rereadable,
  input: CheckedInput,
  rejects: OrderedRejects,
  run: RunState,
): Promise<ImportSummary> {
  const { progress, report, log } = run;
  const ignored = input.columns.flatMap((column, i) =>
    input.mapping.columns.has(column) ? [] : [column === '' ? `column ${i + 1} (no name)` : JSON.stringify(column)],
  );
  if (ignored.length > 0)
    log(`Columns not imported: ${ignored.join(', ')} (no member field; --map <field>=<column> reads one).`);
  const optIns = [...input.mapping.columns].flatMap(([column, field]) => (field === 'subscribed' ? [column] : []));
  if (optIns.length > 0)
    log(
      `Consent: ${optIns.map((c) => JSON.stringify(c)).join(', ')} read as opt-in: "no" or empty means unsubscribed.`,
    );
  const identity: ImportIdentity = { sha256: input.sha256, brandId: request.brandId };
  const checkpointPath =
    request.checkpointPath ?? defaultCheckpointPath(request.configDir, { ...identity, apiUrl: request.apiUrl });

  const found = request.dryRun || request.restart ? undefined : await readCheckpoint(checkpointPath);
  // A checkpoint of a run that had nothing acknowledged holds nothing to continue.
  const existing = found && !nothingAcknowledged(found) ? found : undefined;
  if (existing && existing.source.sha256 !== input.sha256) {
    throw new CliError(`The checkpoint ${checkpointPath} belongs to a different file.`, {
      hint: 'Pass the original file, or --restart to start over.',
    });
  }
  if (existing && !request.resume) {
    const done = Object.keys(existing.acknowledged).length;
    throw new CliError(`An unfinished import of this file exists (${done} of ${existing.batch_count} batches sent).`, {
      hint: 'Pass --resume to continue it, or --restart to start over.',
    });
  }
  const columns: Reading = Object.fromEntries(
    [...input.mapping.columns].map(([column, field]) => [JSON.stringify(column), field]),
  );
  if (existing)
    requireSameReading(
      existing.reading,
      columns,
      'Resume with the --map and --skip-column of the first run, or pass --restart to start over (members already created are found, not created again).',
    );
  if (request.resume && !existing && !request.dryRun) log('No checkpoint for this file; starting from the beginning.');

  const validatedAt = existing ? new Date(existing.validated_at) : input.checkedAt;
  const batchSize = existing?.batch_size ?? request.batchSize;
  if (existing && existing.batch_size !== request.batchSize)
    log(`Resuming with the batch size of the first run (${batchSize}).`);
  const batchCount = Math.ceil(input.rows / batchSize);
  /** Whether a pass read the whole input again (and so wrote every reject to `rejects`). */
  let reread = false;
  const again = (options: { rejects?: OrderedRejects; earlierRejects?: ReadonlyMap<number, string> } = {}) =>
    (async function* () {
      yield* acceptedRows(await reading.again(), input, { name: run.name, validatedAt, ...options });
      if (options.rejects) reread = true;
    })();
  const rejectedRows = (): number => (reread ? rejects.count : input.invalid);

  Object.assign(progress, {
    phase: 'sending',
    rows: input.rows,
    rejected: input.invalid,
    batchesTotal: batchCount,
    // Candidates include the rare e-mails that only share a hash with another: corrected at the end.
    rowsTotal: input.rows - input.invalid - input.candidates.rows,
  });
  const summarize = (checkpoint: Readonly<Checkpoint> | undefined, resumed: number): ImportSummary => {
    const values = Object.values(checkpoint?.acknowledged ?? {});
    const byApi = values.reduce((sum, o) => sum + o.rejected.length, 0);
    const duration = Date.now() - run.startedAt;
    return {
      file: request.input.name,
      format: input.format,
      rows: input.rows,
      batches: batchCount,
      new: values.reduce((sum, o) => sum + o.new, 0),
      found: values.reduce((sum, o) => sum + o.found, 0),
      rejected: rejectedRows(),
      rejected_invalid: rejectedRows() - byApi,
      rejected_by_api: byApi,
      resumed_batches: resumed,
      dry_run: Boolean(request.dryRun),
      rejects_file: rejectedRows() > 0 ? run.rejectsPath : null,
      duration_ms: duration,
      rows_per_second: duration > 0 ? Math.round((progress.rowsThisRun * 1000) / duration) : 0,
    };
  };

  if (request.dryRun) {
    // A second reading only when it can change the answer: possible duplicates, or --update's plan.
    const members = request.update && (await request.update.brandMembers(request.signal));
    const plan =
      members || input.candidates.rows > 0
        ? await changesOf(guarded(again({ rejects })), members || new Map())
        : undefined;
    progress.phase = 'done';
    report();
    const summary = summarize(undefined, 0);
    return members && plan
      ? { ...summary, created: plan.created, updated: plan.updates.length, unchanged: plan.unchanged }
      : summary;
  }

  const writer = new CheckpointWriter(
    checkpointPath,
    existing ?? { ...freshCheckpoint(request, input, batchCount, batchSize, validatedAt), reading: columns },
  );
  const resumed = Object.keys(writer.state.acknowledged).length;
  const tally = (): void => {
    const outcomes = Object.values(writer.state.acknowledged);
    progress.batchesDone = outcomes.length;
    progress.new = outcomes.reduce((sum, o) => sum + o.new, 0);
    progress.found = outcomes.reduce((sum, o) => sum + o.found, 0);
    progress.rejected = Math.max(
      rejects.count,
      input.invalid + outcomes.reduce((sum, o) => sum + o.rejected.length, 0),
    );
    progress.rowsDone = outcomes.reduce((sum, o) => sum + o.new + o.found + o.rejected.length, 0);
  };
  tally();
  report();
  // Written at the first acknowledged batch (CheckpointWriter.acknowledge): a run that sends
  // nothing, or nothing the API answered, leaves no checkpoint to --resume.
  const forget = async (): Promise<boolean> => {
    if (!nothingAcknowledged(writer.state)) return false;
    await writer.remove();
    return true;
  };

  const earlierRejects = new Map(
    Object.values(writer.state.acknowledged).flatMap((outcome) =>
      outcome.rejected.map((r) => [r.line, r.error] as const),
    ),
  );
  try {
    await sendBatches({
      rows: guarded(again({ rejects, earlierRejects })),
      rowCount: input.rows,
      batchSize,
      concurrency: request.concurrency,
      identity,
      writer,
      rejects,
      sendSignups: request.sendSignups,
      signal: request.signal,
      onBatch: (rows) => {
        progress.rowsThisRun += rows;
        tally();
        report();
      },
    });
  } catch (error) {
    if (await forget()) log('Nothing was imported; after fixing the cause, run the same command again.');
    else
      log(
        `Progress is saved (${progress.batchesDone} of ${batchCount} batches); after fixing the cause, continue with ${resumeWith(request, '')}.`,
      );
    throw error;
  }
  if (request.signal.aborted) {
    if (await forget())
      throw new InterruptedError(
        'Import interrupted before any batch was acknowledged; nothing to resume.',
        `Run it again: loyalty members import ${request.input.name}`,
      );
    throw new InterruptedError(
      `Import interrupted after ${progress.batchesDone} of ${batchCount} batches; progress is saved.`,
      `Continue with: ${resumeWith(request, '')}`,
    );
  }
  const update = request.update && (await updatePhase(request, request.update, again(), writer, log));
  await writer.remove();
  progress.phase = 'done';
  // The total was an estimate while rows repeating an earlier e-mail were only candidates.
  progress.rowsTotal = progress.rowsDone;
  report();
  const summary = summarize(writer.state, resumed);
  return update ? { ...summary, ...update } : summary;
}

/** A changed input is a usage problem the user can act on, not an internal error. */
async function* guarded<T>(rows: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* rows;
  } catch (error) {
    if (error instanceof InputChanged)
      throw new CliError(error.message, {
        hint: 'Import a file that nothing writes to while it is imported (copy it first); batches already sent are recognised on the next run.',
      });
    throw error;
  }
}

/** The --update plan over the accepted rows, read as they stream by. */
async function changesOf(rows: AsyncIterable<AcceptedRow>, members: ReadonlyMap<string, BrandMember>) {
  const plan = planUpdates([], members);
  for await (const row of rows) {
    const one = planUpdates([row], members);
    plan.created += one.created;
    plan.unchanged += one.unchanged;
    plan.updates.push(...one.updates);
  }
  return plan;
}

/**
 * After every sign-up batch: the brand's members now (those just created have the file's names),
 * the ones whose names differ updated in batches. A resumed import compares again, so members
 * updated before the interruption are not sent twice; the checkpoint keeps the count.
 */
async function updatePhase(
  request: ImportRequest,
  update: ImportUpdate,
  rows: AsyncIterable<AcceptedRow>,
  writer: CheckpointWriter,
  log: (message: string) => void,
): Promise<{ updated: number }> {
  const plan = await changesOf(guarded(rows), await update.brandMembers(request.signal));
  if (plan.updates.length > 0) log(`Updating the names of ${plan.updates.length} existing members.`);
  try {
    await applyUpdates({
      updates: plan.updates,
      batchSize: request.batchSize,
      concurrency: request.concurrency,
      send: update.send,
      signal: request.signal,
      onBatch: (updated) => writer.addUpdated(updated),
    });
  } catch (error) {
    log(`Progress is saved; after fixing the cause, continue with ${resumeWith(request, '--update ')}.`);
    throw error;
  }
  if (request.signal.aborted) {
    throw new InterruptedError(
      `Import interrupted while updating members (${writer.state.updated ?? 0} updated); progress is saved.`,
      `Continue with: ${resumeWith(request, '--update ')}`,
    );
  }
  return { updated: writer.state.updated ?? 0 };
}

/** The command that continues this import: the words as typed when known (every option), else the file and `flags`. */
const resumeWith = (request: ImportRequest, flags: string): string =>
  request.commandLine
    ? continueCommand(request.commandLine)
    : `loyalty members import ${shellWord(request.input.name)} ${flags}--resume`;

/** Whether a checkpoint records no acknowledged batch and no updated member. */
const nothingAcknowledged = (checkpoint: Readonly<Checkpoint>): boolean =>
  Object.keys(checkpoint.acknowledged).length === 0 && !checkpoint.updated;

function freshCheckpoint(
  request: ImportRequest,
  input: { sha256: string; rows: number },
  batchCount: number,
  batchSize: number,
  validatedAt: Date,
): Checkpoint {
  const at = new Date().toISOString();
  return {
    version: 1,
    source: { name: request.input.name, sha256: input.sha256, rows: input.rows },
    api_url: request.apiUrl,
    brand_id: request.brandId,
    batch_size: batchSize,
    batch_count: batchCount,
    validated_at: validatedAt.toISOString(),
    started_at: at,
    updated_at: at,
    acknowledged: {},
  };
}
