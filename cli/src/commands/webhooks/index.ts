import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { EVENT_TYPES } from '../../domain.js';
import { webhooksListenCommand } from './listen.js';
import { webhooksVerifyCommand } from './verify.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function webhooksCommand(): Command {
  const webhooks = new Command('webhooks').description('Webhook subscriptions, deliveries, signature checks and a local listener');
  webhooks.addCommand(
    new Command('list')
      .description('List webhook subscriptions')
      .option('--organization <id>', 'organization (needed when the token has several)')
      .addHelpText('after', examples(['loyalty webhooks list', 'all subscriptions'], ['loyalty webhooks list --json | jq -r ".[].url"', 'URLs only']))
      .action(async (options: { organization?: string }, command: Command) => (await import('../../services/webhooks.js')).listSubscriptions(await contextOf(command), options.organization)),
  );
  webhooks.addCommand(
    new Command('create')
      .description('Subscribe an HTTPS URL to events; prints the signing secret (shown only once)')
      .requiredOption('--url <url>', 'HTTPS URL that receives the deliveries')
      .option('--events <list>', `comma-separated events (default: all of ${EVENT_TYPES.join(', ')}); repeatable`, collect, [])
      .option('--organization <id>', 'organization (needed when the token has several)')
      .option('--print-secret', 'print only the secret, for scripts')
      .addHelpText('after', examples(
        ['loyalty webhooks create --url https://example.com/hooks --events member.created,coupon.issued', 'two events'],
        ['SECRET=$(loyalty webhooks create --url https://example.com/hooks --print-secret)', 'keep the secret in a script'],
      ))
      .action(async (options: { url: string; events: string[]; organization?: string; printSecret?: boolean }, command: Command) =>
        (await import('../../services/webhooks.js')).createSubscription(await contextOf(command), options),
      ),
  );
  webhooks.addCommand(
    new Command('delete')
      .description('Delete a subscription (pending retries are dropped)')
      .argument('<id>', 'subscription id')
      .addHelpText('after', examples(['loyalty webhooks delete 3c9e…', 'stop deliveries to that URL']))
      .action(async (id: string, _options: object, command: Command) => (await import('../../services/webhooks.js')).deleteSubscription(await contextOf(command), id)),
  );
  webhooks.addCommand(
    new Command('rotate-secret')
      .description('Issue a new signing secret; the previous one stays valid for a while')
      .argument('<id>', 'subscription id')
      .option('--print-secret', 'print only the new secret')
      .addHelpText('after', examples(['(umask 077; loyalty webhooks rotate-secret 3c9e… --print-secret > secret.txt)', 'rotate and save, readable only by you']))
      .action(async (id: string, options: { printSecret?: boolean }, command: Command) => (await import('../../services/webhooks.js')).rotateSecret(await contextOf(command), id, options.printSecret)),
  );
  webhooks.addCommand(
    new Command('deliveries')
      .description('Show the delivery log of a subscription: attempts, status codes, errors')
      .argument('<id>', 'subscription id')
      .option('--status <status>', 'pending, delivered or failed')
      .option('--limit <n>', 'deliveries per page')
      .option('--after <cursor>', 'continue after this cursor')
      .addHelpText('after', examples(['loyalty webhooks deliveries 3c9e… --status failed', 'failed deliveries'], ['loyalty webhooks deliveries 3c9e… --json', 'with every attempt']))
      .action(async (id: string, options: { status?: string; limit?: string; after?: string }, command: Command) => (await import('../../services/webhooks.js')).listDeliveries(await contextOf(command), id, options)),
  );
  webhooks.addCommand(
    new Command('retry')
      .description('Send a delivery again now')
      .argument('<id>', 'subscription id')
      .argument('<delivery>', 'delivery id (see `loyalty webhooks deliveries`)')
      .addHelpText('after', examples(['loyalty webhooks retry 3c9e… 81a0…', 'after fixing the receiver']))
      .action(async (id: string, delivery: string, _options: object, command: Command) => (await import('../../services/webhooks.js')).retryDelivery(await contextOf(command), id, delivery)),
  );
  webhooks.addCommand(webhooksVerifyCommand());
  webhooks.addCommand(webhooksListenCommand());
  return webhooks;
}
