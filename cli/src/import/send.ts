// The sending pass of an import: accepted rows cut into batches by input position (batch N holds
// the same rows in every run over the same file), each batch not yet acknowledged sent with its
// idempotency key, a few at a time, and checkpointed when the API answers. Reading waits while
// `concurrency` batches are in flight, so at most that many batches (and the one being filled)
// are held, however long the file.
import { batchIdempotencyKey, type ImportIdentity } from './batch.js';
import type { BatchOutcome, CheckpointWriter } from './checkpoint.js';
import type { OrderedRejects } from './rejects.js';
import type { SendSignups } from './send-signups.js';
import type { AcceptedRow } from './validate.js';

export interface SendPass {
  rows: AsyncIterable<AcceptedRow>;
  /** Rows in the input, for the number of batches. */
  rowCount: number;
  batchSize: number;
  concurrency: number;
  identity: ImportIdentity;
  writer: CheckpointWriter;
  /** Every rejected row goes here; rows after an unanswered batch wait there for its answer. */
  rejects: OrderedRejects;
  sendSignups: SendSignups;
  signal: AbortSignal;
  /** After each acknowledged batch, with its rows. */
  onBatch: (rows: number) => void;
}

interface Batch {
  index: number;
  rows: AcceptedRow[];
}

/** Sends every batch not yet acknowledged; throws the first failure once the batches in flight have ended. */
export async function sendBatches(pass: SendPass): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  /** Batches sent and not answered, and the one being filled: the API may still refuse their rows. */
  const open = new Set<Batch>();
  const hold = () => pass.rejects.hold(Math.min(...[...open].map((b) => b.rows[0]?.line ?? Number.POSITIVE_INFINITY)));
  let failure: unknown;
  const stopped = () => failure !== undefined || pass.signal.aborted;

  const sendOne = async (batch: Batch): Promise<void> => {
    const outcome = await sendBatch(pass, batch);
    for (const { line, error } of outcome.rejected) {
      const row = batch.rows.find((r) => r.line === line);
      await pass.rejects.add({ line, fields: row?.fields ?? {}, error });
    }
    await pass.writer.acknowledge(batch.index, outcome);
    open.delete(batch);
    await hold();
    pass.onBatch(batch.rows.length);
  };
  const close = async (batch: Batch): Promise<void> => {
    if (pass.writer.isAcknowledged(batch.index)) return;
    while (inFlight.size >= pass.concurrency) await Promise.race(inFlight);
    if (stopped()) return;
    const sending: Promise<void> = sendOne(batch)
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };

  const fresh = (index: number): Batch => {
    const next = { index, rows: [] };
    open.add(next);
    return next;
  };
  const finish = async (done: Batch): Promise<void> => {
    if (done.rows.length === 0 || stopped()) open.delete(done);
    await close(done);
  };
  let batch = fresh(0);
  for await (const row of pass.rows) {
    const index = Math.floor(row.position / pass.batchSize);
    // Batches between the last one and this row's have no accepted row: acknowledged as empty.
    for (; batch.index < index && !stopped(); batch = fresh(batch.index + 1)) await finish(batch);
    if (stopped()) break;
    if (!pass.writer.isAcknowledged(index)) {
      batch.rows.push(row);
      if (batch.rows.length === 1) await hold();
    }
  }
  const batchCount = Math.ceil(pass.rowCount / pass.batchSize);
  for (; batch.index < batchCount && !stopped(); batch = fresh(batch.index + 1)) await finish(batch);
  open.delete(batch);
  await Promise.all(inFlight);
  if (!stopped()) await pass.rejects.hold(Number.POSITIVE_INFINITY);
  if (failure !== undefined && !pass.signal.aborted) throw failure;
}

/** One batch: rows the API names in a 422 are taken out and the rest sent again. */
async function sendBatch(pass: SendPass, batch: Batch): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { new: 0, found: 0, rejected: [] };
  let rows = batch.rows;
  while (rows.length > 0) {
    const users = rows.map((row) => row.user);
    const answer = await pass.sendSignups(users, {
      idempotencyKey: batchIdempotencyKey(pass.identity, batch.index, users),
      signal: pass.signal,
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
  return outcome;
}
