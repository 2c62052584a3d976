// `points import` as a whole: read and check every row, read the live state (members, passes and,
// with --set, balances), print the plan, then send each row's scans a few at a time, checkpointing
// every batch of rows that has been answered. The rows are held in memory (a few hundred bytes
// each); the reading, rejects file and checkpoint are the members import's own.
import { resolve } from 'node:path';
import { CliError, InterruptedError } from '../../errors.js';
import { continueCommand } from '../rerun.js';
import {
  CheckpointWriter,
  defaultCheckpointPath,
  readCheckpoint,
  requireSameReading,
  type Checkpoint,
} from '../checkpoint.js';
import type { InputFormat } from '../parse.js';
import { defaultRejectsPath, RejectsWriter } from '../rejects.js';
import type { Chunks } from '../reread.js';
import { RowRefused, type PointsApi } from './api.js';
import { balancesOf, liveState } from './live.js';
import {
  actionOf,
  deltaOf,
  emptyCounts,
  resolveRows,
  type FileIdentity,
  type PlanCounts,
  type RejectedPointsRow,
} from './plan.js';
import { readRows } from './read.js';
import { passKey, sendRow, type Planned } from './send-row.js';
import type { PointsMapping, PointsMode } from './rows.js';

export interface PointsOutcome extends Omit<PlanCounts, 'rejected'> {
  rejected: Array<{ line: number; error: string }>;
}

export interface PointsProgress {
  phase: 'reading' | 'planning' | 'sending' | 'done';
  rows: number;
  rejected: number;
  /** Rows with something to send, and how many of them are done (earlier runs included). */
  rowsTotal: number;
  rowsDone: number;
  created: number;
  adjusted: number;
  unchanged: number;
  rowsThisRun: number;
  startedAt: number;
}

export interface PointsImportRequest {
  input: { name: string; chunks: Chunks; format?: InputFormat | undefined; delimiter?: string | undefined };
  mode: PointsMode;
  defaultStorecard?: string | undefined;
  /** Columns named by `--map field=column`. */
  mapping?: PointsMapping | undefined;
  /** The words of the run as typed after `loyalty`: the "Continue with" line repeats them. */
  commandLine?: readonly string[] | undefined;
  brandId: string;
  apiUrl: string;
  configDir: string;
  concurrency: number;
  dryRun?: boolean;
  resume?: boolean;
  restart?: boolean;
  checkpointPath?: string | undefined;
  rejectsPath?: string | undefined;
  cwd?: string;
  signal: AbortSignal;
  api: PointsApi;
  onPlan?: (plan: PlanCounts) => void;
  onProgress?: (progress: PointsProgress) => void;
  log?: (message: string) => void;
  /** Called before each row is sent (tests pace a run with it). */
  beforeRow?: (line: number) => Promise<void>;
}

export interface PointsSummary extends PlanCounts {
  file: string;
  mode: PointsMode;
  rows: number;
  dry_run: boolean;
  resumed_batches: number;
  rejects_file: string | null;
  duration_ms: number;
  rows_per_second: number;
}

/** Rows per checkpointed batch. */
export const POINTS_BATCH_ROWS = 200;

export async function runPointsImport(request: PointsImportRequest): Promise<PointsSummary> {
  const startedAt = Date.now();
  const log = request.log ?? (() => undefined);
  const progress: PointsProgress = {
    phase: 'reading',
    rows: 0,
    rejected: 0,
    rowsTotal: 0,
    rowsDone: 0,
    created: 0,
    adjusted: 0,
    unchanged: 0,
    rowsThisRun: 0,
    startedAt,
  };
  const report = (): void => request.onProgress?.({ ...progress });
  report();

  const read = await readRows(request);
  const rejected: RejectedPointsRow[] = [...read.rejected];
  const file: FileIdentity = { sha256: read.sha256, brandId: request.brandId, mode: request.mode };
  const rejectsPath = request.rejectsPath ?? defaultRejectsPath(request.input.name, read.format);
  // The checkpoint is judged before the live state is read and a plan shown: a resume that would
  // read the file another way is refused first.
  const identity = {
    sha256: read.sha256,
    brandId: request.brandId,
    apiUrl: request.apiUrl,
    kind: `points-${request.mode}`,
  };
  const checkpointPath = request.checkpointPath ?? defaultCheckpointPath(request.configDir, identity);
  const found = request.restart || request.dryRun ? undefined : await readCheckpoint<PointsOutcome>(checkpointPath);
  const existing = found && Object.keys(found.acknowledged).length > 0 ? found : undefined;
  if (existing && existing.source.sha256 !== read.sha256)
    throw new CliError(`The checkpoint ${checkpointPath} belongs to a different file.`, {
      hint: 'Pass the original file, or --restart to start over.',
    });
  if (existing && !request.resume)
    throw new CliError(
      `An unfinished points import of this file exists (${Object.keys(existing.acknowledged).length} of ${existing.batch_count} batches sent).`,
      { hint: 'Pass --resume to continue it, or --restart to start over (no row is credited twice either way).' },
    );
  if (existing)
    requireSameReading(
      existing.reading,
      read.reading,
      'Resume with the --map and --storecard of the first run, or pass --restart to start over (no row is credited twice either way).',
    );
  Object.assign(progress, { phase: 'planning', rows: read.count, rejected: rejected.length });
  report();
  const live = await liveState(request, read.rows);
  const { resolved, rejected: unknown } = resolveRows(read.rows, live, request.mode);
  rejected.push(...unknown);
  const balances = request.mode === 'set' ? await balancesOf(request, resolved) : new Map<string, number | undefined>();
  // With --add a member may have several rows: the first one that sends issues the pass.
  const issuedEarlier = new Set<string>();
  const planned: Planned[] = resolved.map((r) => {
    const balance = r.passCode ? balances.get(r.passCode) : undefined;
    const delta = deltaOf(request.mode, r.row.points, balance);
    const action = actionOf(delta, Boolean(r.passCode) || issuedEarlier.has(passKey(r)));
    if (action === 'created') issuedEarlier.add(passKey(r));
    return { ...r, delta, action, from: request.mode === 'set' ? (balance ?? 0) : null };
  });
  const plan = emptyCounts();
  for (const p of planned) plan[p.action] += 1;
  plan.rejected = rejected.length;
  request.onPlan?.(plan);

  const writeRejects = async (extra: readonly RejectedPointsRow[]): Promise<string | null> => {
    const all = [...rejected, ...extra].sort((a, b) => a.line - b.line);
    if (all.length === 0) return null;
    const writer = new RejectsWriter(resolve(request.cwd ?? '.', rejectsPath), read.format, read.columns, read.style, {
      replacing: true,
    });
    for (const row of all) await writer.add(row);
    await writer.commit();
    return rejectsPath;
  };
  const summarize = (counts: PlanCounts, resumed: number, file: string | null): PointsSummary => {
    const duration = Date.now() - startedAt;
    return {
      file: request.input.name,
      mode: request.mode,
      rows: read.count,
      ...counts,
      dry_run: Boolean(request.dryRun),
      resumed_batches: resumed,
      rejects_file: file,
      duration_ms: duration,
      rows_per_second: duration > 0 ? Math.round((progress.rowsThisRun * 1000) / duration) : 0,
    };
  };

  if (request.dryRun) {
    progress.phase = 'done';
    report();
    return summarize(plan, 0, await writeRejects([]));
  }

  if (request.resume && !existing) log('No checkpoint for this file; starting from the beginning.');
  const batchCount = Math.ceil(read.count / POINTS_BATCH_ROWS);
  const now = new Date().toISOString();
  const fresh: Checkpoint<PointsOutcome> = {
    version: 1,
    source: { name: request.input.name, sha256: read.sha256, rows: read.count },
    api_url: request.apiUrl,
    brand_id: request.brandId,
    batch_size: POINTS_BATCH_ROWS,
    batch_count: batchCount,
    validated_at: now,
    started_at: now,
    updated_at: now,
    acknowledged: {},
    reading: read.reading,
  };
  const writer = new CheckpointWriter<PointsOutcome>(checkpointPath, existing ?? fresh);
  const resumed = Object.keys(writer.state.acknowledged).length;

  // Rows by batch; a batch whose rows all need nothing is never written to the checkpoint.
  const batches = new Map<number, Planned[]>();
  for (const p of planned) {
    const index = Math.floor(p.row.position / POINTS_BATCH_ROWS);
    if (!batches.has(index)) batches.set(index, []);
    batches.get(index)?.push(p);
  }
  const totals = emptyCounts();
  const sendRejects: RejectedPointsRow[] = [];
  const pending: Array<{ index: number; rows: Planned[] }> = [];
  for (const [index, rows] of batches) {
    const earlier = writer.state.acknowledged[String(index)];
    if (earlier) {
      totals.created += earlier.created;
      totals.adjusted += earlier.adjusted;
      totals.unchanged += earlier.unchanged;
      for (const r of earlier.rejected) {
        const row = rows.find((p) => p.row.line === r.line);
        sendRejects.push({ line: r.line, fields: row?.row.fields ?? {}, error: r.error });
      }
    } else if (rows.every((p) => p.action === 'unchanged')) {
      totals.unchanged += rows.length;
    } else {
      pending.push({ index, rows });
    }
  }
  const toSend = (rows: Planned[]) => rows.filter((p) => p.action !== 'unchanged').length;
  Object.assign(progress, {
    phase: 'sending',
    rejected: rejected.length + sendRejects.length,
    rowsTotal: planned.filter((p) => p.action !== 'unchanged').length,
  });
  progress.rowsDone = progress.rowsTotal - pending.reduce((sum, b) => sum + toSend(b.rows), 0);
  const tally = (): void => {
    Object.assign(progress, {
      created: totals.created,
      adjusted: totals.adjusted,
      unchanged: totals.unchanged,
      rejected: rejected.length + sendRejects.length,
    });
    report();
  };
  tally();

  let failure: unknown;
  const stopped = (): boolean => failure !== undefined || request.signal.aborted;
  const queue = pending.flatMap((batch) => {
    const outcome: PointsOutcome = { created: 0, adjusted: 0, unchanged: 0, rejected: [] };
    const state = { left: batch.rows.length };
    return batch.rows.map((p) => ({ p, batch, outcome, state }));
  });
  let next = 0;
  // Rows of one pass are sent one after the other, in file order (a spend after the credit before it).
  const previous = new Map<string, Promise<unknown>>();
  const inTurn = <T>(key: string, send: () => Promise<T>): Promise<T> => {
    const sending = (previous.get(key) ?? Promise.resolve()).catch(() => undefined).then(send);
    previous.set(key, sending);
    return sending;
  };
  const worker = async (): Promise<void> => {
    while (next < queue.length && !stopped()) {
      const item = queue[next++];
      if (!item) break;
      const { p, batch, outcome, state } = item;
      try {
        if (p.action !== 'unchanged') await request.beforeRow?.(p.row.line);
        const action =
          p.action === 'unchanged' ? 'unchanged' : await inTurn(passKey(p), () => sendRow(request, file, p));
        outcome[action] += 1;
        totals[action] += 1;
      } catch (error) {
        if (!(error instanceof RowRefused)) {
          if (!request.signal.aborted) failure ??= error;
          return;
        }
        outcome.rejected.push({ line: p.row.line, error: `rejected by the API: ${error.message}` });
        sendRejects.push({ line: p.row.line, fields: p.row.fields, error: `rejected by the API: ${error.message}` });
      }
      if (p.action !== 'unchanged') {
        progress.rowsDone += 1;
        progress.rowsThisRun += 1;
      }
      state.left -= 1;
      if (state.left === 0) await writer.acknowledge(batch.index, outcome);
      tally();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, request.concurrency) }, worker));
  const rejectsFile = await writeRejects(sendRejects);
  const done = Object.keys(writer.state.acknowledged).length;
  if (request.signal.aborted || failure !== undefined) {
    const saved = done > 0;
    if (!saved) await writer.remove();
    if (failure !== undefined) {
      log(
        saved
          ? `Progress is saved (${done} batches); after fixing the cause, continue with ${request.commandLine ? continueCommand(request.commandLine) : '--resume'}.`
          : 'Nothing is saved; after fixing the cause, run the same command again (no row is credited twice).',
      );
      throw failure;
    }
    throw new InterruptedError(
      saved
        ? `Points import interrupted after ${progress.rowsDone} of ${progress.rowsTotal} rows; progress is saved.`
        : 'Points import interrupted before any batch was answered; nothing to resume.',
      saved
        ? `Continue with: ${request.commandLine ? continueCommand(request.commandLine) : `loyalty points import ${request.input.name} --${request.mode} --resume`}`
        : `Run it again: loyalty points import ${request.input.name} --${request.mode}`,
    );
  }
  await writer.remove();
  progress.phase = 'done';
  tally();
  totals.rejected = rejected.length + sendRejects.length;
  return summarize(totals, resumed, rejectsFile);
}
