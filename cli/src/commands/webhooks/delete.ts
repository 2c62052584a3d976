import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksDeleteCommand(): Command {
  return new Command('delete')
    .description('Delete a subscription (pending retries are dropped)')
    .argument('<id>', 'subscription id')
    .addHelpText('after', examples(['loyalty webhooks delete 3c9e…', 'stop deliveries to that URL']))
    .action(async (id: string, _options: object, command: Command) => {
      await (await import('../../services/webhooks/webhooks.js')).deleteSubscription(await contextOf(command), id);
    });
}
