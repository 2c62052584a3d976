import { Command, Option } from 'commander';
import { contextOf } from '../../context.js';
import { DELIVERY_STATUSES } from '../../domain.js';
import { examples } from '../../help.js';

export function webhooksDeliveriesCommand(): Command {
  return new Command('deliveries')
    .description('Show the delivery log of a subscription: attempts, status codes, errors')
    .argument('<id>', 'subscription id')
    .addOption(new Option('--status <status>', 'only deliveries in this state').choices(DELIVERY_STATUSES))
    .option('--limit <n>', 'deliveries per page, 1 to 100')
    .option('--after <cursor>', 'continue after this cursor')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks deliveries 3c9e… --status failed', 'failed deliveries'],
        ['loyalty webhooks deliveries 3c9e… --json', 'with every attempt'],
      ),
    )
    .action(async (id: string, options: { status?: string; limit?: string; after?: string }, command: Command) => {
      await (await import('../../services/webhooks/webhooks.js')).listDeliveries(await contextOf(command), id, options);
    });
}
