import { Command, Option } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { ListenOptions } from '../../services/webhooks/listen.js';
import { collect, eventsOption, organizationOption } from '../options.js';

export function webhooksListenCommand(): Command {
  return new Command('listen')
    .description('Print events as they happen; with --forward-to or --forward, deliver them signed to local URLs')
    .option(
      '--forward-to <url>',
      'POST each event here (the catch-all), signed like a real delivery with the local secret',
    )
    .addOption(
      new Option('--forward <type=url>', 'POST events of this type to this URL instead; repeatable')
        .argParser(collect)
        .default([]),
    )
    .addOption(
      new Option('--headers <headers>', 'extra "Name: value" headers on every forward; repeatable or comma-separated')
        .argParser(collect)
        .default([]),
    )
    .option(
      '--headers-file <path>',
      'more headers, one "Name: value" per line: for a credential of the receiver (argv is visible to other users)',
    )
    .option(
      '--forward-retries <n>',
      'retries of a failed forward (5xx, 408, 429, timeout…), 1 s, 2 s, 4 s … apart',
      '5',
    )
    .option('--resume', 'continue after the last event forwarded in an earlier run (per profile and organization)')
    .addOption(eventsOption('all'))
    .option('--print-secret', 'print only the local signing secret and exit')
    .addOption(organizationOption())
    .option('--replay <n>', 'first deliver the last n events (0 to 100)', '0')
    .option('--wait <seconds>', 'long-poll time per request (1 to 30)', '25')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks listen', 'print events as they happen'],
        [
          'loyalty webhooks listen --forward-to http://localhost:4242/webhooks',
          'deliver to a receiver on this machine',
        ],
        [
          'loyalty webhooks listen --forward coupon.issued=http://localhost:4242/coupons --forward-to http://localhost:4242/other',
          'coupon.issued to its own URL, every other type to the catch-all',
        ],
        [
          'loyalty webhooks listen --forward-to http://localhost:4242/webhooks --headers "X-Env: dev, X-Team: loyalty"',
          'extra headers on every forward',
        ],
        [
          'loyalty webhooks listen --forward-to http://localhost:4242/webhooks --resume',
          'also forward what happened while listen was stopped',
        ],
        [
          'export LOYALTY_WEBHOOK_SECRET=$(loyalty webhooks listen --print-secret)',
          'give the receiver the local secret',
        ],
        ['loyalty webhooks listen --events coupon.issued --json | jq .data', 'one event type, as JSON Lines'],
      ),
    )
    .addHelpText(
      'after',
      `
The local secret is kept in the profile, so it stays the same between runs.
Each URL gets its events in feed order; a failed forward is retried with the same message id
(Loyalty-Attempt counts up) without holding up printing or other URLs. A 4xx other than 408 and
429 is final. With --json, outcomes are {"forward": …} lines between the events.
--resume saves its point in the config directory (listen-state.json, mode 0600). An event whose
retries ran out, or that Ctrl-C abandoned, is not passed: the next --resume forwards it again.
`,
    )
    .action(async (options: ListenOptions, command: Command) => {
      await (await import('../../services/webhooks/listen.js')).listen(await contextOf(command), options);
    });
}
