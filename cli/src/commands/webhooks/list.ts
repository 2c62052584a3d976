import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { organizationOption } from '../options.js';

export function webhooksListCommand(): Command {
  return new Command('list')
    .description('List webhook subscriptions')
    .addOption(organizationOption())
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks list', 'all subscriptions'],
        ['loyalty webhooks list --json | jq -r ".[].url"', 'URLs only'],
      ),
    )
    .action(async (options: { organization?: string }, command: Command) => {
      await (await import('../../services/webhooks/webhooks.js')).listSubscriptions(
        await contextOf(command),
        options.organization,
      );
    });
}
