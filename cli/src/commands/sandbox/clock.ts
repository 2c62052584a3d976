import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

const service = () => import('../../services/sandbox.js');

export function sandboxClockCommand(): Command {
  return new Command('clock')
    .description("Show the sandbox clock (the server's now, its offset from real time)")
    .addHelpText('after', examples(['loyalty sandbox clock', 'show it'], ['loyalty sandbox clock --json', 'as JSON']))
    .action(async (_options: object, command: Command) => {
      await (await service()).showClock(await contextOf(command));
    })
    .addCommand(
      new Command('advance')
        .description('Move the clock forward by a duration (30s, 15m, 2h, 7d); real time keeps running from there')
        .argument('<duration>', 'a positive whole number and a unit: s, m, h or d')
        .addHelpText(
          'after',
          examples(
            ['loyalty sandbox clock advance 7d', 'a week ahead: coupons valid for less expire'],
            ['loyalty sandbox clock advance 1m', 'the first webhook retry (30 s) falls due and is sent'],
          ),
        )
        .action(async (duration: string, _options: object, command: Command) => {
          await (await service()).advanceClock(await contextOf(command), duration);
        }),
    )
    .addCommand(
      new Command('set')
        .description('Move the clock forward to a time (never back: `loyalty sandbox reset` goes back to real time)')
        .argument('<time>', 'an RFC 3339 date-time, e.g. 2026-12-31T09:00:00Z')
        .addHelpText('after', examples(['loyalty sandbox clock set 2026-12-31T09:00:00Z', 'to New Year’s Eve']))
        .action(async (time: string, _options: object, command: Command) => {
          await (await service()).setClock(await contextOf(command), time);
        }),
    );
}
