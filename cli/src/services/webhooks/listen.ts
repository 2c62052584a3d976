// `loyalty webhooks listen`: follows the event feed (GET /events, long poll), prints each event
// and forwards it, signed with a local secret, to the URL of its type (--forward) or the catch-all
// (--forward-to), so a receiver can be tested without a public URL. Connection loss is reported
// loudly and the feed is resumed from the last cursor, so no event is missed. Forwarding runs in
// one queue per URL (listen-forward.ts); --resume keeps the point reached between runs (listen-resume.ts).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { readProfile, updateProfile } from '../../settings.js';
import { CliError, ExitCode, usageError } from '../../errors.js';
import { call } from '../common/api.js';
import { backoffDelay, DestinationQueue, type FeedEvent, type ForwardReport } from './listen-forward.js';
import { destinationOf, type ForwardPlan, forwardPlan, forwards } from './listen-options.js';
import { describePlan, printEvent, printForward } from './listen-report.js';
import {
  type ResumePoint,
  readResumePoint,
  ResumeSaver,
  ResumeTracker,
  resumeKey,
  stateFileOf,
  writeResumePoint,
} from './listen-resume.js';
import { parseEvents } from './webhooks.js';
import { isThisMachine, systemErrorCode } from '../../api-retries.js';

/** A refused connection to this machine (the server is not running there). */
function refusedOnThisMachine(error: unknown, apiUrl: string): boolean {
  const cause = error instanceof CliError ? error.cause : error;
  return systemErrorCode(cause) === 'ECONNREFUSED' && isThisMachine(apiUrl);
}

export type { FeedEvent } from './listen-forward.js';

export interface ListenOptions {
  forwardTo?: string;
  forward: string[];
  headers: string[];
  headersFile?: string;
  forwardRetries: string;
  resume?: boolean;
  events: string[];
  printSecret?: boolean;
  organization?: string;
  replay: string;
  wait: string;
}

/** How long Ctrl-C lets forwards in flight finish before abandoning them. */
export const STOP_GRACE_MS = 5000;

export const generateSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The local signing secret of this profile, created on first use and kept so receivers stay configured. */
export async function localSecret(ctx: Context): Promise<string> {
  const profile = ctx.config.profile.name;
  const stored = (await readProfile(ctx.runtime.env, profile)).listen_secret;
  if (stored) return stored;
  const secret = generateSecret();
  await updateProfile(ctx.runtime.env, profile, (p) => ({ ...p, listen_secret: secret }));
  return secret;
}

/** Delay before reconnect attempt n (1-based): 1, 2, 4, 8, 16, 30 s, with ±20 % jitter. */
export const reconnectDelay = backoffDelay;

/** Remembers the last `size` ids; `add` is false for an id seen before. */
export class RecentIds {
  readonly #ids = new Set<string>();
  readonly #size: number;
  constructor(size: number) {
    this.#size = size;
  }
  add(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.#size) {
      const oldest = this.#ids.values().next();
      if (!oldest.done) this.#ids.delete(oldest.value);
    }
    return true;
  }
}

/** Worth reconnecting after: no response, a timeout, 408, 429 or a server error. */
export function isTransient(error: unknown): boolean {
  const cause = error instanceof CliError ? error.cause : error;
  if (!isLoyaltyError(cause)) return false;
  return cause.status === 0 || cause.status === 408 || cause.status === 429 || cause.status >= 500;
}

const isInvalidCursor = (error: unknown): boolean => {
  const cause = error instanceof CliError ? error.cause : error;
  return isLoyaltyError(cause) && cause.status === 422;
};

/**
 * `--headers-file`: one "Name: value" per line (blank lines and # comments skipped), for headers
 * that carry a credential of the receiver: kept out of argv, where other users can read it.
 */
export async function readHeaderLines(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw usageError(`--headers-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

export async function listen(ctx: Context, options: ListenOptions): Promise<void> {
  const { output } = ctx;
  if (options.printSecret) {
    output.write(await localSecret(ctx));
    return;
  }
  const eventTypes = options.events.length ? parseEvents(options.events) : [];
  const types = eventTypes.length ? eventTypes.join(',') : undefined;
  const fromFile = options.headersFile === undefined ? [] : await readHeaderLines(options.headersFile);
  const plan = forwardPlan({ ...options, headers: [...fromFile, ...options.headers], events: eventTypes });
  const replay = Number(options.replay);
  const wait = Number(options.wait);
  if (!Number.isInteger(replay) || replay < 0 || replay > 100) throw usageError('--replay must be 0 to 100.');
  if (!Number.isInteger(wait) || wait < 1 || wait > 30) throw usageError('--wait must be 1 to 30 seconds.');
  if (options.resume && !forwards(plan))
    throw usageError('--resume remembers what was forwarded: add --forward-to or --forward.');
  if (options.resume && replay > 0)
    throw usageError('--resume and --replay cannot be combined: --resume already starts where the last run stopped.');
  const secret = forwards(plan) ? await localSecret(ctx) : undefined;

  const configDir = ctx.config.configDir;
  const key = resumeKey(ctx.config.profile.name, ctx.apiUrl, options.organization);
  const saved = options.resume ? await readResumePoint(configDir, key) : undefined;
  let tracker = saved ? new ResumeTracker(saved) : undefined;
  const saver = new ResumeSaver(async () => {
    if (!tracker) return;
    await writeResumePoint(configDir, key, tracker.point()).catch((error: unknown) =>
      output.warn(`Could not save the resume point in ${stateFileOf(configDir)}: ${(error as Error).message}`),
    );
  });

  const onForward = (report: ForwardReport): void => {
    printForward(output, report, Boolean(options.resume));
    if (!tracker) return;
    const { event, url, outcome, status, error } = report;
    if (outcome === 'delivered') tracker.acknowledge(event.id);
    else if (outcome === 'rejected') tracker.reject(event.id);
    else if (outcome === 'failed' || outcome === 'abandoned')
      tracker.leaveUnsettled({ id: event.id, type: event.type, url, last: String(status ?? error ?? outcome) });
    if (outcome !== 'retrying' && options.resume) saver.request();
  };
  const queues = new Map<string, DestinationQueue>();
  const queueFor = (url: string): DestinationQueue => {
    let queue = queues.get(url);
    if (!queue) {
      queue = new DestinationQueue({
        url,
        secret: secret as string,
        headers: plan.headers,
        retries: plan.retries,
        report: onForward,
      });
      queues.set(url, queue);
    }
    return queue;
  };

  // No SDK retries here: the loop below reports every drop and reconnect itself.
  const client = ctx.client({ retry: false, timeoutMs: (wait + 15) * 1000 });
  const poll = (page: { limit: number; after?: string; wait?: number }) =>
    call(
      ctx,
      (api, signal) =>
        api.GET('/events', { params: { query: { types, organization_id: options.organization, ...page } }, signal }),
      { client },
    );

  // Delivery is at least once; a feed re-read after a reconnect must not deliver twice.
  const seen = new RecentIds(10_000);
  /** Prints the page's new events and hands each to its destination; answers what the resume point needs. */
  const handle = (events: readonly FeedEvent[]) => {
    const forwarded: string[] = [];
    const skipped: string[] = [];
    for (const event of events) {
      if (!seen.add(event.id)) continue;
      if (tracker?.isAcknowledged(event.id)) {
        skipped.push(event.id);
        continue;
      }
      printEvent(output, event);
      const url = destinationOf(plan, event.type);
      if (!url) continue;
      forwarded.push(event.id);
      queueFor(url).push(event);
    }
    return { forwarded, skipped };
  };

  let cursor = saved?.cursor;
  let failures = 0;
  let announced = false;
  try {
    while (!ctx.signal.aborted) {
      try {
        // Without a cursor the first request returns the latest events: it marks "now"; --replay shows some of them.
        const first = cursor === undefined;
        const page = first
          ? await poll({ limit: Math.max(1, replay) })
          : await poll({ after: cursor, wait, limit: 100 });
        if (failures > 0)
          output.success(
            output.err.green(`Reconnected to ${ctx.apiUrl}; resuming from where the feed stopped (no events missed).`),
          );
        failures = 0;
        const moved = page.next_cursor !== cursor;
        cursor = page.next_cursor;
        if (!announced) {
          announced = true;
          announce(ctx, { types, resume: options.resume }, plan, secret, saved);
        }
        const { forwarded, skipped } = handle(first ? (replay > 0 ? page.data.slice(-replay) : []) : page.data);
        // Followed in every run that forwards, so that what a Ctrl-C leaves unforwarded can be
        // kept for --resume (saved as it goes only with --resume; see the end).
        if (secret) {
          tracker ??= new ResumeTracker({ cursor: page.next_cursor });
          if (!first) tracker.addPage(page.next_cursor, forwarded, skipped);
          if (options.resume && (first || moved || forwarded.length || skipped.length)) saver.request();
        }
      } catch (error) {
        if (ctx.signal.aborted) break;
        // Before the feed ever answered, a refused connection on this machine is a server that is not running.
        if (!announced && refusedOnThisMachine(error, ctx.apiUrl)) throw error;
        if (saved && !announced && isInvalidCursor(error))
          throw new CliError(`The saved resume point is not a cursor of the event feed of ${ctx.apiUrl}.`, {
            exitCode: ExitCode.usage,
            hint: `Was the server's data reset? Remove the entry "${key}" from ${stateFileOf(configDir)} to start from now.`,
            cause: error,
          });
        if (!isTransient(error)) throw error;
        failures += 1;
        const delay = reconnectDelay(failures);
        output.error(
          output.err.red(
            `Connection to the event feed lost: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
        output.info(output.err.yellow(`  Reconnecting in ${(delay / 1000).toFixed(0)} s (attempt ${failures})…`));
        await sleep(delay, undefined, { signal: ctx.signal }).catch(() => undefined);
      }
    }
  } finally {
    await stopForwarding(ctx, [...queues.values()]);
    if (tracker) await keepUnforwarded(ctx, { tracker, saver, resume: Boolean(options.resume), key });
    if (ctx.signal.aborted) output.info('Stopped listening.');
  }
  throw new CliError('', { exitCode: ExitCode.interrupted });
}

/**
 * At the end of a run that forwards: one line for the events not forwarded (abandoned at Ctrl-C,
 * or out of retries), and a resume point from which `--resume` forwards them. A run with --resume
 * saves its own; a run without it saves one only when there is none, since an earlier run's point
 * comes before these events and a resumed run forwards them from there too.
 */
async function keepUnforwarded(
  ctx: Context,
  run: { tracker: ResumeTracker; saver: ResumeSaver; resume: boolean; key: string },
): Promise<void> {
  const { output } = ctx;
  const configDir = ctx.config.configDir;
  const point = run.tracker.point();
  const count = point.unsettled.length;
  let earlier: ResumePoint | undefined;
  if (run.resume) await run.saver.flush();
  else if (count > 0) {
    earlier = await readResumePoint(configDir, run.key);
    if (!earlier)
      await writeResumePoint(configDir, run.key, point).catch((error: unknown) =>
        output.warn(`Could not save the resume point in ${stateFileOf(configDir)}: ${(error as Error).message}`),
      );
  }
  if (count === 0) {
    if (run.resume) output.info('Resume point saved: `--resume` continues from here.');
    return;
  }
  output.warn(
    `${count} event${count === 1 ? '' : 's'} not forwarded; rerun with --resume to receive them` +
      (earlier ? ` (it starts from the point saved ${earlier.saved_at}, before them).` : '.'),
  );
}

async function stopForwarding(ctx: Context, queues: DestinationQueue[]): Promise<void> {
  const pending = queues.reduce((sum, queue) => sum + queue.pending, 0);
  if (pending)
    ctx.output.info(
      `Finishing ${pending === 1 ? 'the forward' : 'forwards'} in flight (at most ${STOP_GRACE_MS / 1000} s)…`,
    );
  await Promise.all(queues.map((queue) => queue.stop(STOP_GRACE_MS)));
}

function announce(
  ctx: Context,
  options: { types: string | undefined; resume: boolean | undefined },
  plan: ForwardPlan,
  secret: string | undefined,
  saved: ResumePoint | undefined,
): void {
  const { output } = ctx;
  output.success(
    `Listening for ${options.types ?? 'all events'} on ${ctx.apiUrl}${secret ? `, forwarding ${describePlan(plan)}` : ''}. Ctrl-C to stop.`,
  );
  if (secret) {
    const urls = [...new Set([...plan.byType.values(), ...(plan.catchAll ? [plan.catchAll] : [])])];
    output.info(
      `Signing secret for ${urls.join(', ')}: ${output.err.bold(secret)} (same every run; \`--print-secret\` prints it)`,
    );
  }
  if (!options.resume) return;
  if (saved)
    output.info(
      `Resuming from the point saved ${saved.saved_at}${saved.unsettled.length ? ` (${saved.unsettled.length} not acknowledged then: forwarded again)` : ''}.`,
    );
  else output.info(`No resume point yet for profile ${ctx.config.profile.name}: starting from now.`);
}
