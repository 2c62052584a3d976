// Finding the event a recipe caused in the organization's event feed (GET /events): a cursor taken
// before the first step marks "now"; afterwards the feed is long-polled from there until an event
// of the type with the created ids shows up. The event row commits with the change that emits it,
// but the feed shows a transaction's events only once every older transaction has ended, so the
// lookup waits a little even though the event already exists.
import { setTimeout as sleep } from 'node:timers/promises';
import type { components } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { dataOf, request } from '../common/api.js';
import { type Created, isEventOf, type TriggerType } from './recipes.js';
import { lacksAbility } from './steps.js';

export type FeedEvent = components['schemas']['Event'];

export interface FeedOptions {
  organization?: string | undefined;
  /** Whether the lookup must succeed (`--wait`): failures are errors, not warnings. */
  required: boolean;
}

const LOOKUP = 'looking the event up in the event feed (GET /events)';

/** The feed's cursor before anything is created; undefined (with a warning) when the feed is out of reach. */
export async function markFeed(ctx: Context, type: TriggerType, options: FeedOptions): Promise<string | undefined> {
  const result = await request(ctx, (api, signal) =>
    api.GET('/events', { params: { query: { types: type, limit: 1, organization_id: options.organization } }, signal }),
  );
  const status = result.response.status;
  if (status === 403) {
    const missing = lacksAbility(LOOKUP, 'webhooks.get', result.error);
    if (options.required) throw missing;
    return skipLookup(ctx, missing);
  }
  try {
    return dataOf(ctx, result).next_cursor;
  } catch (error) {
    // 422: the token reaches several organizations and --organization is missing. Anything else
    // (credentials, a server failure) would stop the first step too: say it once, now.
    if (status !== 422 || !(error instanceof CliError)) throw error;
    const hint = 'Pass --organization <id> when the token reaches several organizations.';
    const unscoped = new CliError(error.message, { exitCode: error.exitCode, hint, cause: error.cause });
    if (options.required) throw unscoped;
    return skipLookup(ctx, unscoped);
  }
}

function skipLookup(ctx: Context, why: CliError): undefined {
  ctx.output.warn(`The event id will not be shown: ${why.message}`);
  if (why.hint) ctx.output.info(`  ${ctx.output.err.dim('→')} ${why.hint}`);
  return undefined;
}

/** The event of `type` carrying the created ids, once it shows in the feed within `timeoutMs`. */
export async function findEvent(
  ctx: Context,
  type: TriggerType,
  after: string,
  created: Created,
  { organization, timeoutMs }: { organization?: string | undefined; timeoutMs: number },
): Promise<FeedEvent | undefined> {
  const deadline = Date.now() + timeoutMs;
  let cursor = after;
  for (;;) {
    const wait = Math.max(0, Math.min(5, Math.ceil((deadline - Date.now()) / 1000)));
    const page = dataOf(
      ctx,
      await request(ctx, (api, signal) =>
        api.GET('/events', {
          params: { query: { after: cursor, types: type, wait, limit: 100, organization_id: organization } },
          signal,
        }),
      ),
    );
    const event = page.data.find((e) => e.type === type && isEventOf(e.data, created));
    if (event) return event;
    cursor = page.next_cursor;
    if (Date.now() >= deadline || ctx.signal.aborted) return undefined;
    // A feed that answers at once with nothing new (a proxy cutting long polls) is not hammered.
    if (!page.data.length) await sleep(200, undefined, { signal: ctx.signal }).catch(() => undefined);
  }
}
