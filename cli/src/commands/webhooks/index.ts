import { Command } from 'commander';
import { webhooksCreateCommand } from './create.js';
import { webhooksDeleteCommand } from './delete.js';
import { webhooksDeliveriesCommand } from './deliveries.js';
import { webhooksListCommand } from './list.js';
import { webhooksListenCommand } from './listen.js';
import { webhooksRetryCommand } from './retry.js';
import { webhooksRotateSecretCommand } from './rotate-secret.js';
import { webhooksTestReceiverCommand } from './test-receiver.js';
import { webhooksVerifyCommand } from './verify.js';

export function webhooksCommand(): Command {
  return new Command('webhooks')
    .description('Webhook subscriptions, deliveries, signature checks and a local listener')
    .addCommand(webhooksListCommand())
    .addCommand(webhooksCreateCommand())
    .addCommand(webhooksDeleteCommand())
    .addCommand(webhooksRotateSecretCommand())
    .addCommand(webhooksDeliveriesCommand())
    .addCommand(webhooksRetryCommand())
    .addCommand(webhooksVerifyCommand())
    .addCommand(webhooksTestReceiverCommand())
    .addCommand(webhooksListenCommand());
}
