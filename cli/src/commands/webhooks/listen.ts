import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { ListenOptions } from '../../services/listen.js';
import { eventsOption, organizationOption } from '../options.js';

export function webhooksListenCommand(): Command {
  return new Command('listen')
    .description('Print events as they happen; with --forward-to, deliver them signed to a local URL')
    .option('--forward-to <url>', 'POST each event here, signed like a real delivery with the local secret')
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
          'export LOYALTY_WEBHOOK_SECRET=$(loyalty webhooks listen --print-secret)',
          'give the receiver the local secret',
        ],
        ['loyalty webhooks listen --events coupon.issued --json | jq .data', 'one event type, as JSON Lines'],
      ),
    )
    .addHelpText('after', '\nThe local secret is kept in the profile, so it stays the same between runs.\n')
    .action(async (options: ListenOptions, command: Command) => {
      await (await import('../../services/listen.js')).listen(await contextOf(command), options);
    });
}
