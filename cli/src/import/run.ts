// The import as a whole: read and validate everything, then send batches a few at a time,
// checkpointing each acknowledged batch, and finish with rejects file and summary.
import { resolve } from 'node:path';
import { CliError, InterruptedError } from '../errors.js';
import { batchIdempotencyKey, planBatches, type ImportIdentity, type SignupBatch } from './batch.js';
import {
  CheckpointWriter,
  defaultCheckpointPath,
  readCheckpoint,
  type BatchOutcome,
  type Checkpoint,
} from './checkpoint.js';
import { mapColumns, type MemberField } from './columns.js';
import { readImportInput, type InputFormat } from './parse.js';
import { applyUpdates, planUpdates, type BrandMember, type SendMemberUpdates } from './update.js';
import { defaultRejectsPath, writeRejects } from './rejects.js';
import { validateRows, type AcceptedRow, type RejectedRow, type SignupUser } from './validate.js';

/** What the API answered for one POST /members/signups. Other failures are thrown. */
export type SignupAnswer =
  | { ok: true; new: number; found: number }
  /** 422: rowErrors maps an index in `users` to its message; empty when the batch as a whole was refused. */
  | { ok: false; message: string; rowErrors: Map<number, string> };

export type SendSignups = (
  users: SignupUser[],
  options: { idempotencyKey: string; signal: AbortSignal },
) => Promise<SignupAnswer>;

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
    chunks: AsyncIterable<Buffer | string>;
    format?: InputFormat | undefined;
    delimiter?: string | undefined;
  };
  brandId: string;
  apiUrl: string;
  configDir: string;
  batchSize: number;
  concurrency: number;
  mapping?: Partial<Record<MemberField, string>>;
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
  const startedAt = Date.now();
  const now = request.now ?? (() => new Date());
  const log = request.log ?? (() => undefined);
  const progress = startingProgress(startedAt);
  const report = (): void => request.onProgress?.({ ...progress });
  report();

  const input = await readImportInput(request.input.chunks, {
    format: request.input.format,
    delimiter: request.input.delimiter,
    name: request.input.name === '-' ? 'stdin' : request.input.name,
  });
  const mapping = mapColumns(input.columns, request.mapping);
  const ignored = input.columns.flatMap((column, i) =>
    mapping.columns.has(column) ? [] : [column === '' ? `column ${i + 1} (no name)` : JSON.stringify(column)],
  );
  if (ignored.length > 0)
    log(`Columns not imported: ${ignored.join(', ')} (no member field; --map <field>=<column> reads one).`);
  const identity: ImportIdentity = { sha256: input.sha256, brandId: request.brandId };
  const checkpointPath =
    request.checkpointPath ?? defaultCheckpointPath(request.configDir, { ...identity, apiUrl: request.apiUrl });

  const existing = request.dryRun || request.restart ? undefined : await readCheckpoint(checkpointPath);
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
  if (request.resume && !existing && !request.dryRun) log('No checkpoint for this file; starting from the beginning.');

  const validatedAt = existing ? new Date(existing.validated_at) : now();
  const { accepted, rejected: invalid } = validateRows(input.rows, mapping.apply, validatedAt);
  const batchSize = existing?.batch_size ?? request.batchSize;
  if (existing && existing.batch_size !== request.batchSize)
    log(`Resuming with the batch size of the first run (${batchSize}).`);
  const batches = planBatches(input.rows.length, accepted, batchSize);
  const rejectsPath = request.rejectsPath ?? defaultRejectsPath(request.input.name, input.format);
  const rejectsFile = resolve(request.cwd ?? '.', rejectsPath);

  Object.assign(progress, {
    phase: 'sending',
    rows: input.rows.length,
    rejected: invalid.length,
    batchesTotal: batches.length,
    rowsTotal: accepted.length,
  });
  const summarize = (
    outcomes: Record<string, BatchOutcome>,
    apiRejects: RejectedRow[],
    resumed: number,
  ): ImportSummary => {
    const values = Object.values(outcomes);
    const rejected = invalid.length + apiRejects.length;
    const duration = Date.now() - startedAt;
    return {
      file: request.input.name,
      format: input.format,
      rows: input.rows.length,
      batches: batches.length,
      new: values.reduce((sum, o) => sum + o.new, 0),
      found: values.reduce((sum, o) => sum + o.found, 0),
      rejected,
      rejected_invalid: invalid.length,
      rejected_by_api: apiRejects.length,
      resumed_batches: resumed,
      dry_run: Boolean(request.dryRun),
      rejects_file: rejected > 0 ? rejectsPath : null,
      duration_ms: duration,
      rows_per_second: duration > 0 ? Math.round((progress.rowsThisRun * 1000) / duration) : 0,
    };
  };

  if (request.dryRun) {
    if (invalid.length > 0) await writeRejects(rejectsFile, input.format, input.columns, invalid, input);
    const plan = request.update && planUpdates(accepted, await request.update.brandMembers(request.signal));
    progress.phase = 'done';
    report();
    const summary = summarize({}, [], 0);
    return plan
      ? { ...summary, created: plan.created, updated: plan.updates.length, unchanged: plan.unchanged }
      : summary;
  }

  const writer = new CheckpointWriter(
    checkpointPath,
    existing ?? freshCheckpoint(request, input, batches.length, batchSize, validatedAt),
  );
  const resumed = Object.keys(writer.state.acknowledged).length;
  const rowsByLine = new Map(input.rows.map((row) => [row.line, row]));
  const apiRejects = (): RejectedRow[] =>
    Object.values(writer.state.acknowledged).flatMap((outcome) =>
      outcome.rejected.map(({ line, error }) => ({ line, error, fields: rowsByLine.get(line)?.fields ?? {} })),
    );
  const tally = (): void => {
    const outcomes = Object.entries(writer.state.acknowledged);
    progress.batchesDone = outcomes.length;
    progress.new = outcomes.reduce((sum, [, o]) => sum + o.new, 0);
    progress.found = outcomes.reduce((sum, [, o]) => sum + o.found, 0);
    progress.rejected = invalid.length + outcomes.reduce((sum, [, o]) => sum + o.rejected.length, 0);
    progress.rowsDone = outcomes.reduce((sum, [index]) => sum + (batches[Number(index)]?.rows.length ?? 0), 0);
  };
  tally();
  report();
  await writer.save();

  const sendBatch = async (batch: SignupBatch): Promise<void> => {
    const outcome: BatchOutcome = { new: 0, found: 0, rejected: [] };
    let rows: AcceptedRow[] = batch.rows;
    while (rows.length > 0) {
      const users = rows.map((row) => row.user);
      const answer = await request.sendSignups(users, {
        idempotencyKey: batchIdempotencyKey(identity, batch.index, users),
        signal: request.signal,
      });
      if (answer.ok) {
        outcome.new += answer.new;
        outcome.found += answer.found;
        break;
      }
      const keep = rows.filter((_, i) => !answer.rowErrors.has(i));
      if (keep.length === rows.length) {
        // Nothing points at a row: the API refused the batch as a whole.
        outcome.rejected.push(
          ...rows.map((row) => ({ line: row.line, error: `rejected by the API: ${answer.message}` })),
        );
        break;
      }
      rows.forEach((row, i) => {
        const error = answer.rowErrors.get(i);
        if (error !== undefined) outcome.rejected.push({ line: row.line, error: `rejected by the API: ${error}` });
      });
      rows = keep;
    }
    await writer.acknowledge(batch.index, outcome);
    progress.rowsThisRun += batch.rows.length;
    tally();
    report();
  };

  const pending = batches.filter((batch) => !writer.isAcknowledged(batch.index));
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined && !request.signal.aborted) {
      const batch = pending[next++];
      if (!batch) break; // none left
      try {
        await sendBatch(batch);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(request.concurrency, pending.length)) }, worker));

  const rejectedRows = [...invalid, ...apiRejects()];
  if (rejectedRows.length > 0) await writeRejects(rejectsFile, input.format, input.columns, rejectedRows, input);
  if (request.signal.aborted) {
    throw new InterruptedError(
      `Import interrupted after ${progress.batchesDone} of ${batches.length} batches; progress is saved.`,
      `Continue with: loyalty members import ${request.input.name} --resume`,
    );
  }
  if (failure !== undefined) {
    log(
      `Progress is saved (${progress.batchesDone} of ${batches.length} batches); after fixing the cause, continue with --resume.`,
    );
    throw failure;
  }
  const update = request.update && (await updatePhase(request, request.update, accepted, writer, log));
  await writer.remove();
  progress.phase = 'done';
  report();
  const summary = summarize(writer.state.acknowledged, apiRejects(), resumed);
  return update ? { ...summary, ...update } : summary;
}

/**
 * After every sign-up batch: the brand's members now (those just created have the file's names),
 * the ones whose names differ updated in batches. A resumed import compares again, so members
 * updated before the interruption are not sent twice; the checkpoint keeps the count.
 */
async function updatePhase(
  request: ImportRequest,
  update: ImportUpdate,
  accepted: readonly AcceptedRow[],
  writer: CheckpointWriter,
  log: (message: string) => void,
): Promise<{ updated: number }> {
  const plan = planUpdates(accepted, await update.brandMembers(request.signal));
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
    log('Progress is saved; after fixing the cause, continue with --resume.');
    throw error;
  }
  if (request.signal.aborted) {
    throw new InterruptedError(
      `Import interrupted while updating members (${writer.state.updated ?? 0} updated); progress is saved.`,
      `Continue with: loyalty members import ${request.input.name} --update --resume`,
    );
  }
  return { updated: writer.state.updated ?? 0 };
}

function freshCheckpoint(
  request: ImportRequest,
  input: { sha256: string; rows: unknown[] },
  batchCount: number,
  batchSize: number,
  validatedAt: Date,
): Checkpoint {
  const at = new Date().toISOString();
  return {
    version: 1,
    source: { name: request.input.name, sha256: input.sha256, rows: input.rows.length },
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
