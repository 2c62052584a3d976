import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { organizationOption } from '../options.js';

const service = () => import('../../services/sandbox/sandbox.js');

/** --organization before or after the verb (`clock` itself takes it too, and commander gives it the flag). */
const organizationOf = (command: Command): string | undefined =>
  command.optsWithGlobals<{ organization?: string }>().organization;

export function sandboxClockCommand(): Command {
  return new Command('clock')
    .description("Show the sandbox clock (the server's now, its offset from real time)")
    .addOption(organizationOption('whose clock (needed when the token has several organizations)'))
    .addHelpText(
      'after',
      examples(
        ['loyalty sandbox clock', 'show it'],
        ['loyalty sandbox clock --json', 'as JSON'],
        ['loyalty sandbox clock --organization org-globex', 'for a token of several organizations'],
      ),
    )
    .action(async (options: { organization?: string }, command: Command) => {
      await (await service()).showClock(await contextOf(command), options.organization);
    })
    .addCommand(
      new Command('advance')
        .description('Move the clock forward by a duration (30s, 15m, 2h, 7d); real time keeps running from there')
        .argument('<duration>', 'a positive whole number and a unit: s, m, h or d')
        .addOption(organizationOption('whose clock (needed when the token has several organizations)'))
        .addHelpText(
          'after',
          examples(
            ['loyalty sandbox clock advance 7d', 'a week ahead: coupons valid for less expire'],
            ['loyalty sandbox clock advance 1m', 'the first webhook retry (30 s) falls due and is sent'],
          ),
        )
        .action(async (duration: string, _options: object, command: Command) => {
          await (await service()).advanceClock(await contextOf(command), duration, organizationOf(command));
        }),
    )
    .addCommand(
      new Command('set')
        .description('Move the clock forward to a time (never back: `loyalty sandbox reset` goes back to real time)')
        .argument('<time>', 'an RFC 3339 date-time, e.g. 2026-12-31T09:00:00Z')
        .addOption(organizationOption('whose clock (needed when the token has several organizations)'))
        .addHelpText('after', examples(['loyalty sandbox clock set 2026-12-31T09:00:00Z', 'to New Year’s Eve']))
        .action(async (time: string, _options: object, command: Command) => {
          await (await service()).setClock(await contextOf(command), time, organizationOf(command));
        }),
    );
}
