// The checkpoint of an import: which batches the API has acknowledged and what it answered.
// It is rewritten atomically (temp file, fsync, rename) after every acknowledged batch, so
// a crash or Ctrl-C at any moment leaves either the previous or the next state on disk.
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CliError, usageError } from '../errors.js';

export interface BatchOutcome {
  new: number;
  found: number;
  /** Rows the API rejected (422), by input line. */
  rejected: Array<{ line: number; error: string }>;
}

/** Generic in what a batch's answer holds: `members import` keeps a BatchOutcome, `points import` its own. */
export interface Checkpoint<Outcome = BatchOutcome> {
  version: 1;
  source: { name: string; sha256: string; rows: number };
  api_url: string;
  brand_id: string;
  batch_size: number;
  batch_count: number;
  /** The "now" that subscribed_at was validated against; a resumed run reuses it. */
  validated_at: string;
  started_at: string;
  updated_at: string;
  acknowledged: Record<string, Outcome>;
  /** `--update`: members updated so far, after every sign-up batch was acknowledged. */
  updated?: number;
  /** How the rows were read (absent in checkpoints written before it was kept); a resumed run must read them the same way. */
  reading?: Reading;
}

/**
 * How a run reads the rows, as text per key: `members import` the field of each read column,
 * `points import` the column of each field and the --storecard default. Acknowledged batches are
 * skipped by position, so a run that reads the same file another way would mix two readings.
 */
export type Reading = Record<string, string>;

/** Refuses to continue an import whose first run read the rows another way (a usage error naming each difference). */
export function requireSameReading(before: Reading | undefined, now: Reading, hint: string): void {
  if (!before) return;
  const keys = [...new Set([...Object.keys(before), ...Object.keys(now)])].sort();
  const changed = keys.filter((key) => before[key] !== now[key]);
  if (changed.length === 0) return;
  const shown = (value: string | undefined) => value ?? 'not read';
  throw usageError(
    `This run reads the file differently from the unfinished import it would resume: ${changed
      .map((key) => `${key}: ${shown(before[key])} then, ${shown(now[key])} now`)
      .join('; ')}.`,
    hint,
  );
}

export function defaultCheckpointPath(
  configDir: string,
  key: { sha256: string; brandId: string; apiUrl: string; kind?: string },
): string {
  // `kind` keeps another import of the same file (points) apart; members keep their original key.
  const text = `${key.apiUrl}\n${key.brandId}\n${key.sha256}${key.kind ? `\n${key.kind}` : ''}`;
  const id = createHash('sha256').update(text).digest('hex').slice(0, 32);
  return join(configDir, 'imports', `${id}.json`);
}

export async function readCheckpoint<Outcome = BatchOutcome>(path: string): Promise<Checkpoint<Outcome> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const checkpoint = JSON.parse(text) as Checkpoint<Outcome>;
    if (checkpoint.version !== 1 || typeof checkpoint.acknowledged !== 'object') throw new Error('unknown version');
    return checkpoint;
  } catch {
    throw new CliError(`The checkpoint ${path} is damaged.`, {
      hint: 'Run the import again with --restart; batches already sent are recognised by their idempotency keys or as existing members.',
    });
  }
}

async function writeAtomically(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    // The mode above applies only to a new file; a temp file left by a crashed process that
    // had the same pid keeps its own. The rename then makes the checkpoint this file.
    await handle.chmod(0o600);
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}

/** Serialises checkpoint writes from batches that finish concurrently. */
export class CheckpointWriter<Outcome = BatchOutcome> {
  readonly path: string;
  readonly #state: Checkpoint<Outcome>;
  #queue: Promise<void> = Promise.resolve();

  constructor(path: string, state: Checkpoint<Outcome>) {
    this.path = path;
    this.#state = state;
  }

  get state(): Readonly<Checkpoint<Outcome>> {
    return this.#state;
  }

  isAcknowledged(index: number): boolean {
    return String(index) in this.#state.acknowledged;
  }

  /** Resolves once the checkpoint that includes this batch is on disk. */
  acknowledge(index: number, outcome: Outcome): Promise<void> {
    this.#state.acknowledged[String(index)] = outcome;
    return this.save();
  }

  /** Resolves once the checkpoint that counts these updated members is on disk. */
  addUpdated(count: number): Promise<void> {
    this.#state.updated = (this.#state.updated ?? 0) + count;
    return this.save();
  }

  save(): Promise<void> {
    this.#state.updated_at = new Date().toISOString();
    // Compact: rewritten after every batch, it holds one entry per batch (2,500 at 5M rows).
    const snapshot = `${JSON.stringify(this.#state)}\n`;
    const write = this.#queue.then(() => writeAtomically(this.path, snapshot));
    this.#queue = write.catch(() => undefined);
    return write;
  }

  async remove(): Promise<void> {
    await this.#queue;
    await rm(this.path, { force: true });
  }
}
