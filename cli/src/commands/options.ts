// Flags that several commands share, defined once so their spelling and help stay the same.
import { Option } from 'commander';
import { EVENT_TYPES } from '../domain.js';

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
