import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { UpdateOptions } from '../../services/webhooks/webhook-lifecycle.js';
import { brandFlagsOf, eventsOption, filterOptions } from '../options.js';

export function webhooksUpdateCommand(): Command {
  const command = new Command('update')
    .description('Change the URL, events, filter or description of a subscription (the secret stays)')
    .argument('<id>', 'subscription id')
    .option('--url <url>', 'new HTTPS URL (same rules as create)')
    .addOption(eventsOption('unchanged'))
    .option('--description <text>', 'a note for people (up to 500 characters)')
    .option('--clear-description', 'remove the description');
  for (const option of filterOptions()) command.addOption(option);
  return command
    .option('--clear-filter', 'deliver every event of the subscribed types again')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks update 3c9e… --url https://example.com/v2/hooks', 'move the receiver'],
        ['loyalty webhooks update 3c9e… --events coupon.issued,coupon.redeemed', 'replace the event list'],
        ['loyalty webhooks update 3c9e… --brand brand-acme --brand brand-outlet', 'only these two brands'],
      ),
    )
    .addHelpText(
      'after',
      '\nThe filter flags replace the whole filter. To pause or resume deliveries use `loyalty webhooks disable|enable <id>`.\n',
    )
    .action(async (id: string, options: UpdateOptions, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).updateSubscription(
        await contextOf(command),
        id,
        { ...options, brand: brandFlagsOf(command) },
      );
    });
}
