import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { eventsOption, organizationOption } from '../options.js';

export function webhooksCreateCommand(): Command {
  return new Command('create')
    .description('Subscribe an HTTPS URL to events; prints the signing secret (shown only once)')
    .requiredOption('--url <url>', 'HTTPS URL that receives the deliveries')
    .addOption(eventsOption('all'))
    .addOption(organizationOption())
    .option('--print-secret', 'print only the secret, for scripts')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks create --url https://example.com/hooks --events member.created,coupon.issued', 'two events'],
        [
          'SECRET=$(loyalty webhooks create --url https://example.com/hooks --print-secret)',
          'keep the secret in a script',
        ],
      ),
    )
    .action(
      async (
        options: { url: string; events: string[]; organization?: string; printSecret?: boolean },
        command: Command,
      ) => {
        await (await import('../../services/webhooks/webhooks.js')).createSubscription(
          await contextOf(command),
          options,
        );
      },
    );
}
