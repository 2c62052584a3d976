// `loyalty trigger <event-type>`, like `stripe trigger`: runs the event type's recipe against the
// API (a test member, a pass, a redemption or a points transaction: whatever the server needs to
// emit that event for real), reports each step, and finds the emitted event in the event feed.
import type { Context } from '../../context.js';
import type { SettingSource } from '../../settings.js';
import { CliError, usageError } from '../../errors.js';
import { request } from '../common/api.js';
import { closestEventType } from '../webhooks/webhooks.js';
import { findEvent, markFeed } from './feed.js';
import { EVENT_TYPES } from '../../domain.js';
import { type Recipe, type RecipeInput, recipeOf, TRIGGER_TYPES, type TriggerType } from './recipes.js';
import { apiSteps } from './steps.js';

export interface TriggerOptions extends RecipeInput {
  organization?: string;
  /** `--wait [seconds]`: wait until the event shows in the feed (default 30 s); not finding it is an error. */
  wait?: boolean | string;
}

/** How long the event is looked for without --wait, and with a bare --wait. */
const LOOK_SECONDS = 5;
const WAIT_SECONDS = 30;

function waitSeconds(wait: TriggerOptions['wait']): number | undefined {
  if (wait === undefined || wait === false) return undefined;
  if (wait === true) return WAIT_SECONDS;
  const seconds = Number(wait);
  if (!/^\d+$/.test(wait) || seconds < 1 || seconds > 300)
    throw usageError(`--wait must be a whole number of seconds from 1 to 300 (got "${wait}").`);
  return seconds;
}

/** The event type named on the command line, or a usage error listing the valid ones and the closest. */
export function parseTriggerType(name: string): TriggerType {
  const found = TRIGGER_TYPES.find((type) => type === name);
  if (found) return found;
  const known = (EVENT_TYPES as readonly string[]).includes(name);
  const closest = known ? undefined : closestEventType(name);
  const suggestion = closest && (TRIGGER_TYPES as readonly string[]).includes(closest) ? closest : undefined;
  const otherWay = OTHER_WAYS[name];
  throw usageError(
    known
      ? `Event type "${name}" cannot be triggered.${otherWay ? ` ${otherWay}` : ''}`
      : `Unknown event type "${name}".`,
    `${suggestion ? `Did you mean ${suggestion}? ` : ''}Event types: ${TRIGGER_TYPES.join(', ')}.`,
  );
}

/** How to make the server emit an event type that has no recipe, for real. */
const OTHER_WAYS: Record<string, string> = {
  'webhook_subscription.disabled':
    'Disable a subscription to emit it: `loyalty webhooks disable <id>`, then `loyalty webhooks enable <id>`.',
  'webhook_subscription.failing':
    "A subscription emits it when its deliveries keep failing (LOYALTY_WEBHOOK_FAILING_AFTER in a row, 10 by default); the organization's other subscriptions receive it.",
  'webhook_delivery.exhausted':
    'A delivery emits it when its last attempt failed: point a subscription at a receiver that answers 5xx; `loyalty sandbox clock advance 1d` moves through the retry schedule.',
};

const FLAG_OF = { coupon: '--coupon <id>', storecard: '--storecard <id>' } as const;
const DEMO_OF = { coupon: 'coupon-welcome', storecard: 'card-points' } as const;

/** The recipe's flags, checked before anything is created. */
function recipeInput(type: string, recipe: Recipe, options: RecipeInput): Required<RecipeInput> {
  const needs = recipe.needs;
  if (needs && !options[needs])
    throw usageError(
      `${type} needs a ${needs}: pass ${FLAG_OF[needs]}.`,
      `The API does not list ${needs}s; the demo data's is ${DEMO_OF[needs]} (brand brand-acme).`,
    );
  return { coupon: options.coupon ?? '', storecard: options.storecard ?? '' };
}

const BRAND_FROM: Record<SettingSource, string> = {
  flag: '--brand',
  env: 'LOYALTY_BRAND',
  profile: 'the profile',
  default: 'the default',
};

/**
 * --brand, LOYALTY_BRAND or the profile's brand; without one, the first brand the token can see.
 * The API has no list of brands: the brands of the token's tags are the ones it shows.
 */
async function resolveBrand(ctx: Context): Promise<{ id: string; from: string }> {
  const setting = ctx.config.settings.brand;
  if (setting?.value) return { id: setting.value, from: BRAND_FROM[setting.source] };
  const tags = await request(ctx, (api, signal) => api.GET('/tags', { signal }));
  const first = tags.data?.data[0]?.brand_id;
  if (first) return { id: first, from: 'the first brand of the tags the token can see' };
  throw usageError(
    'No brand given, and none found: the API lists no brands, and no tag the token can see names one.',
    'Pass --brand <id>, set LOYALTY_BRAND, or save one with `loyalty config set brand <id>`.',
  );
}

export async function trigger(ctx: Context, name: string, options: TriggerOptions): Promise<void> {
  const { output } = ctx;
  const type = parseTriggerType(name);
  const recipe = recipeOf(type);
  const input = recipeInput(type, recipe, options);
  const wait = waitSeconds(options.wait);
  const brand = await resolveBrand(ctx);
  output.info(`Triggering ${type} in brand ${brand.id} (from ${brand.from}): ${recipe.does}.`);
  const organization = options.organization;
  const cursor = await markFeed(ctx, type, { organization, required: wait !== undefined });

  const created = await recipe.run(apiSteps(ctx, brand.id), input);

  const seconds = wait ?? LOOK_SECONDS;
  const event =
    cursor === undefined
      ? undefined
      : await findEvent(ctx, type, cursor, created, { organization, timeoutMs: seconds * 1000 });
  if (event) output.success(`The server emitted ${type} ${event.id}.`);
  else if (cursor !== undefined) {
    const message = `The ${type} event did not show in the event feed within ${seconds} s.`;
    const hint = `Follow the feed with \`loyalty webhooks listen --events ${type} --replay 10\`.`;
    if (wait !== undefined) throw new CliError(message, { hint });
    output.warn(message);
    output.info(`  ${output.err.dim('→')} ${hint}`);
  }
  const result = { type, brand_id: brand.id, ...created, event_id: event?.id ?? null };
  output.result(result, () =>
    Object.entries(result)
      .filter(([, value]) => value !== null)
      .map(([key, value]) => `${key.padEnd(12)} ${String(value)}`)
      .join('\n'),
  );
}
