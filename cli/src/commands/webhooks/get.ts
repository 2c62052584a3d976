import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksGetCommand(): Command {
  return new Command('get')
    .description('Show one subscription: its state, why it was disabled, how its deliveries are failing')
    .argument('<id>', 'subscription id')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks get 3c9e…', 'state and failure counters'],
        ['loyalty webhooks get 3c9e… --json | jq .disabled_reason', 'why it was disabled'],
      ),
    )
    .action(async (id: string, _options: object, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).showSubscription(
        await contextOf(command),
        id,
      );
    });
}
