import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { FilterFlags } from '../../services/webhooks/subscription-filter.js';
import { brandFlagsOf, eventsOption, filterOptions, organizationOption } from '../options.js';

export function webhooksCreateCommand(): Command {
  const command = new Command('create')
    .description('Subscribe an HTTPS URL to events; prints the signing secret (shown only once)')
    .requiredOption('--url <url>', 'HTTPS URL that receives the deliveries')
    .addOption(eventsOption('all'))
    .addOption(organizationOption())
    .option('--print-secret', 'print only the secret, for scripts');
  for (const option of filterOptions()) command.addOption(option);
  return command
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks create --url https://example.com/hooks --events member.created,coupon.issued', 'two events'],
        [
          'SECRET=$(loyalty webhooks create --url https://example.com/hooks --print-secret)',
          'keep the secret in a script',
        ],
        [
          'loyalty webhooks create --url https://example.com/hooks --events points.changed --brand brand-acme --points-min 100 --points-type earn',
          "one brand's earns of 100 points or more",
        ],
      ),
    )
    .action(
      async (
        options: { url: string; events: string[]; organization?: string; printSecret?: boolean } & FilterFlags,
        command: Command,
      ) => {
        await (await import('../../services/webhooks/webhooks.js')).createSubscription(await contextOf(command), {
          ...options,
          brand: brandFlagsOf(command),
        });
      },
    );
}
