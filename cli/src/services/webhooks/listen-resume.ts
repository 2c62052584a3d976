// `loyalty webhooks listen --resume`: where forwarding stopped, kept between runs in
// <config dir>/listen-state.json (mode 0600, written atomically), one entry per profile, API and
// organization.
//
// The feed's cursor marks a position after a whole page, not after each event, and events of one
// page may be acknowledged out of order (one queue per destination). So the saved point is a low
// mark plus ids: `cursor` is the feed position before which every forwarded event was settled,
// `acknowledged` the events after it that a receiver already answered with 2xx. A resumed run reads
// the feed from `cursor` and skips those ids, so each event is forwarded exactly once across runs.
//
// An event whose retries ran out (or that was abandoned at Ctrl-C) is not settled: the low mark
// stays before it, and the next `--resume` forwards it again. A final 4xx is settled: the receiver
// answered, as with a real delivery; it is listed in `rejected` of the state and printed.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writePrivateFile } from '../../settings.js';

export interface Unsettled {
  id: string;
  type: string;
  url: string;
  /** The last answer: an HTTP status or why there was none. */
  last: string;
}

export interface ResumePoint {
  cursor: string;
  acknowledged: string[];
  /** Events not acknowledged when the run ended: forwarded again on resume. */
  unsettled: Unsettled[];
  saved_at: string;
}

interface StateFile {
  listen: Record<string, ResumePoint>;
}

export const stateFileOf = (configDir: string): string => join(configDir, 'listen-state.json');

export const resumeKey = (profile: string, apiUrl: string, organization: string | undefined): string =>
  `${profile} ${apiUrl} ${organization ?? '(the token’s organization)'}`;

async function readState(configDir: string): Promise<StateFile> {
  try {
    const parsed = JSON.parse(await readFile(stateFileOf(configDir), 'utf8')) as Partial<StateFile>;
    return { listen: parsed.listen ?? {} };
  } catch {
    return { listen: {} };
  }
}

export async function readResumePoint(configDir: string, key: string): Promise<ResumePoint | undefined> {
  const point = (await readState(configDir)).listen[key];
  return point && typeof point.cursor === 'string' && Array.isArray(point.acknowledged) ? point : undefined;
}

export async function writeResumePoint(configDir: string, key: string, point: ResumePoint): Promise<void> {
  const state = await readState(configDir);
  state.listen[key] = point;
  await writePrivateFile(configDir, stateFileOf(configDir), `${JSON.stringify(state, null, 2)}\n`);
}

interface Page {
  /** The feed cursor after this page. */
  cursor: string;
  /** Every event id of the page that was forwarded or skipped as acknowledged. */
  ids: string[];
  /** Forwarded events not settled yet. */
  pending: Set<string>;
}

/** Follows pages and settlements, and answers with the point to save. */
export class ResumeTracker {
  #base: string;
  readonly #acknowledged: Set<string>;
  readonly #pages: Page[] = [];
  readonly #unsettled = new Map<string, Unsettled>();

  constructor(start: { cursor: string; acknowledged?: readonly string[]; unsettled?: readonly Unsettled[] }) {
    this.#base = start.cursor;
    this.#acknowledged = new Set(start.acknowledged ?? []);
    // Still behind the low mark, so forwarded again in this run; listed until then.
    for (const record of start.unsettled ?? []) this.#unsettled.set(record.id, record);
  }

  /** Acknowledged in an earlier run (or earlier in this one): not to be forwarded again. */
  isAcknowledged(id: string): boolean {
    return this.#acknowledged.has(id);
  }

  /** A page read from the feed: `forwarded` are the ids handed to a queue, `skipped` those already acknowledged. */
  addPage(cursor: string, forwarded: readonly string[], skipped: readonly string[] = []): void {
    this.#pages.push({ cursor, ids: [...forwarded, ...skipped], pending: new Set(forwarded) });
    this.#advance();
  }

  acknowledge(id: string): void {
    this.#acknowledged.add(id);
    this.#unsettled.delete(id);
    this.#settle(id);
  }

  /** A final 4xx: the receiver answered; the point may pass it. */
  reject(id: string): void {
    this.#unsettled.delete(id);
    this.#settle(id);
  }

  /** Retries exhausted or abandoned: the point stays before it, so a resumed run forwards it again. */
  leaveUnsettled(record: Unsettled): void {
    this.#unsettled.set(record.id, record);
  }

  point(now = new Date()): ResumePoint {
    return {
      cursor: this.#base,
      acknowledged: [...this.#acknowledged],
      unsettled: [...this.#unsettled.values()],
      saved_at: now.toISOString(),
    };
  }

  #settle(id: string): void {
    for (const page of this.#pages) if (page.pending.delete(id)) break;
    this.#advance();
  }

  #advance(): void {
    while (this.#pages[0] && this.#pages[0].pending.size === 0) {
      const page = this.#pages.shift() as Page;
      this.#base = page.cursor;
      // Behind the low mark the feed never shows these again.
      for (const id of page.ids) this.#acknowledged.delete(id);
    }
  }
}

/** Saves the latest point, one write at a time; changes made during a write are saved right after it. */
export class ResumeSaver {
  readonly #save: () => Promise<void>;
  #writing: Promise<void> | undefined;
  #dirty = false;

  constructor(save: () => Promise<void>) {
    this.#save = save;
  }

  request(): void {
    this.#dirty = true;
    this.#writing ??= this.#loop().finally(() => {
      this.#writing = undefined;
    });
  }

  async flush(): Promise<void> {
    this.request();
    while (this.#writing) await this.#writing;
  }

  async #loop(): Promise<void> {
    while (this.#dirty) {
      this.#dirty = false;
      await this.#save();
    }
  }
}
