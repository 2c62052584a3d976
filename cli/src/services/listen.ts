// `loyalty webhooks listen`: follows the event feed (GET /events, long poll) and, with
// --forward-to, re-delivers each event to a local URL signed with a local secret, so a
// receiver can be tested without a public URL. Connection loss is reported loudly and the
// feed is resumed from the last cursor, so no event is missed.
import { randomBytes } from 'node:crypto';
import { signPayload } from '@loyalty/sdk/webhooks';
import { isLoyaltyError, type components } from '@loyalty/sdk';
import type { Context } from '../context.js';
import { readProfile, updateProfile } from '../config.js';
import { CliError, ExitCode, usageError } from '../errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from './api.js';
import { parseEvents } from './webhooks.js';

export interface ListenOptions {
  forwardTo?: string;
  events: string[];
  printSecret?: boolean;
  organization?: string;
  replay: string;
  wait: string;
}

/** An event of the feed: the document's envelope, one of its event types. */
export type FeedEvent = components['schemas']['Event'];

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
export function reconnectDelay(attempt: number, random = Math.random): number {
  const base = Math.min(30_000, 1000 * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export async function forwardEvent(
  event: FeedEvent,
  url: string,
  secret: string,
  signal: AbortSignal,
): Promise<{ status?: number; error?: string; ms: number }> {
  const body = JSON.stringify(event);
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      body,
      headers: { ...signPayload({ body, secret }), 'user-agent': 'loyalty-cli-listen' },
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
    });
    await response.body?.cancel().catch(() => undefined);
    return { status: response.status, ms: Date.now() - started };
  } catch (error) {
    if (signal.aborted) throw error;
    const cause = (error as Error & { cause?: NodeJS.ErrnoException }).cause;
    const name =
      (error as Error).name === 'TimeoutError'
        ? 'no answer within 10 s'
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { error: name, ms: Date.now() - started };
  }
}

function describe(event: FeedEvent): string {
  const ids = Object.entries(event.data)
    .filter(([key]) => key.endsWith('_id') || key === 'points' || key === 'balance' || key === 'type')
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(' ');
  return ids;
}

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

export async function listen(ctx: Context, options: ListenOptions): Promise<void> {
  const { output } = ctx;
  if (options.printSecret) {
    output.write(await localSecret(ctx));
    return;
  }
  // Where events are forwarded, and the secret they are signed with.
  const forward = options.forwardTo ? { url: options.forwardTo, secret: await localSecret(ctx) } : undefined;
  if (options.forwardTo && !/^https?:\/\//.test(options.forwardTo))
    throw usageError(`--forward-to must be an http(s) URL (got "${options.forwardTo}").`);
  const types = options.events.length ? parseEvents(options.events).join(',') : undefined;
  const replay = Number(options.replay);
  const wait = Number(options.wait);
  if (!Number.isInteger(replay) || replay < 0 || replay > 100) throw usageError('--replay must be 0 to 100.');
  if (!Number.isInteger(wait) || wait < 1 || wait > 30) throw usageError('--wait must be 1 to 30 seconds.');

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
  const handle = async (event: FeedEvent): Promise<void> => {
    if (!seen.add(event.id)) return;
    if (output.json) output.write(JSON.stringify(event));
    else
      output.write(
        `${event.created_at}  ${output.out.bold(event.type.padEnd(15))}  ${event.id}  ${output.out.dim(describe(event))}`,
      );
    if (!forward) return;
    const result = await forwardEvent(event, forward.url, forward.secret, ctx.signal);
    if (result.status !== undefined && result.status >= 200 && result.status < 300) {
      output.info(`  ${output.err.green(`→ ${result.status}`)} POST ${options.forwardTo} [${result.ms} ms]`);
    } else {
      const what = result.status !== undefined ? `${result.status}` : result.error;
      output.info(
        `  ${output.err.red(`→ ✖ ${what}`)} POST ${options.forwardTo} [${result.ms} ms]${result.status === undefined ? ' — is the receiver running?' : ''}`,
      );
    }
  };

  let cursor: string | undefined;
  let failures = 0;
  let announced = false;
  try {
    while (!ctx.signal.aborted) {
      try {
        // The first request (no cursor) returns the latest events: it marks "now"; --replay shows some of them.
        const page =
          cursor === undefined
            ? await poll({ limit: Math.max(1, replay) })
            : await poll({ after: cursor, wait, limit: 100 });
        if (failures > 0)
          output.success(
            output.err.green(`Reconnected to ${ctx.apiUrl}; resuming from where the feed stopped (no events missed).`),
          );
        failures = 0;
        const first = cursor === undefined;
        cursor = page.next_cursor;
        if (!announced) {
          announced = true;
          output.success(
            `Listening for ${types ?? 'all events'} on ${ctx.apiUrl}${options.forwardTo ? `, forwarding to ${options.forwardTo}` : ''}. Ctrl-C to stop.`,
          );
          if (forward)
            output.info(
              `Signing secret for ${forward.url}: ${output.err.bold(forward.secret)} (same every run; \`--print-secret\` prints it)`,
            );
        }
        const events = first ? (replay > 0 ? page.data.slice(-replay) : []) : page.data;
        for (const event of events) await handle(event);
      } catch (error) {
        if (ctx.signal.aborted) break;
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
    if (ctx.signal.aborted) output.info('Stopped listening.');
  }
  throw new CliError('', { exitCode: ExitCode.interrupted });
}
