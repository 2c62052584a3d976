// Flags that several commands share, defined once so their spelling and help stay the same.
import { type Command, Option } from 'commander';
import { EVENT_TYPES } from '../domain.js';
import { commandLineOf } from '../runtime.js';

/** Collects the values of a repeatable flag. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `--organization <id>`: which organization, for a token that reaches several. */
export const organizationOption = (description = 'organization (needed when the token has several)'): Option =>
  new Option('--organization <id>', description);

/** `--events <list>`: event types of the document, comma-separated and repeatable. */
export const eventsOption = (defaultText: string): Option =>
  new Option(
    '--events <list>',
    `comma-separated event types (default: ${defaultText}; one of ${EVENT_TYPES.join(', ')}); repeatable`,
  )
    .argParser(collect)
    .default([]);

/** `--no-progress`: plain progress lines, no live view. */
export const noProgressOption = (): Option => new Option('--no-progress', 'plain progress lines even on a terminal');

/** `--coupon <id>` and `--storecard <id>`: the voucher to issue (exactly one). */
export const voucherOptions = (): Option[] => [
  new Option('--coupon <id>', 'coupon to issue'),
  new Option('--storecard <id>', 'storecard to issue'),
];

/** `-f, --file <path>`: read a list from a file. */
export const fileOption = (what: string): Option => new Option('-f, --file <path>', what);

/**
 * Every `--brand <id>` given on the command line, in order. The root's global `--brand` takes the
 * flag wherever it stands (keeping its last value, or LOYALTY_BRAND's), so a command where it is
 * repeatable (a subscription's filter, `webhooks create|update`) reads the words of the run
 * itself: only brands typed on this command line count, never the environment's or a profile's.
 */
export function brandFlagsOf(command: Command): string[] {
  const words = commandLineOf(command);
  const end = words.indexOf('--');
  const brands: string[] = [];
  for (const [i, word] of words.entries()) {
    if (end !== -1 && i > end) break;
    if (word === '--brand' && words[i + 1] !== undefined) brands.push(words[i + 1] as string);
    else if (word.startsWith('--brand=')) brands.push(word.slice('--brand='.length));
  }
  return brands;
}

/** `--brand`, `--points-min`, `--points-type`: a subscription's filter (webhooks create and update). */
export const filterOptions = (): Option[] => [
  // Listed for the help; the root's --brand takes the words (brandFlagsOf reads them).
  new Option('--brand <id>', "deliver only events of this brand of the subscription's organization; repeatable"),
  new Option('--points-min <n>', 'deliver points.changed only for this many points or more'),
  new Option(
    '--points-type <types>',
    'deliver points.changed only of these types: earn, spend, reverse (comma-separated)',
  )
    .argParser(collect)
    .default([]),
];
