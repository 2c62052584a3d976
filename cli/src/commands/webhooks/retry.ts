import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksRetryCommand(): Command {
  return new Command('retry')
    .description('Send a delivery again now')
    .argument('<id>', 'subscription id')
    .argument('<delivery>', 'delivery id (see `loyalty webhooks deliveries`)')
    .addHelpText('after', examples(['loyalty webhooks retry 3c9e… 81a0…', 'after fixing the receiver']))
    .action(async (id: string, delivery: string, _options: object, command: Command) => {
      await (await import('../../services/webhooks/webhooks.js')).retryDelivery(await contextOf(command), id, delivery);
    });
}
