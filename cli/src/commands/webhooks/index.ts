import { Command } from 'commander';
import { webhooksCreateCommand } from './create.js';
import { webhooksDeleteCommand } from './delete.js';
import { webhooksDeliveriesCommand } from './deliveries.js';
import { webhooksDisableCommand, webhooksEnableCommand } from './enable.js';
import { webhooksEventTypesCommand } from './event-types.js';
import { webhooksGetCommand } from './get.js';
import { webhooksListCommand } from './list.js';
import { webhooksListenCommand } from './listen.js';
import { webhooksRecoverCommand } from './recover.js';
import { webhooksReplayMissingCommand } from './replay-missing.js';
import { webhooksRetryCommand } from './retry.js';
import { webhooksRotateSecretCommand } from './rotate-secret.js';
import { webhooksTestCommand } from './test.js';
import { webhooksTestReceiverCommand } from './test-receiver.js';
import { webhooksUpdateCommand } from './update.js';
import { webhooksVerifyCommand } from './verify.js';

export function webhooksCommand(): Command {
  return new Command('webhooks')
    .description('Webhook subscriptions, deliveries, signature checks and a local listener')
    .addCommand(webhooksListCommand())
    .addCommand(webhooksGetCommand())
    .addCommand(webhooksCreateCommand())
    .addCommand(webhooksUpdateCommand())
    .addCommand(webhooksEnableCommand())
    .addCommand(webhooksDisableCommand())
    .addCommand(webhooksDeleteCommand())
    .addCommand(webhooksRotateSecretCommand())
    .addCommand(webhooksTestCommand())
    .addCommand(webhooksDeliveriesCommand())
    .addCommand(webhooksRetryCommand())
    .addCommand(webhooksRecoverCommand())
    .addCommand(webhooksReplayMissingCommand())
    .addCommand(webhooksEventTypesCommand())
    .addCommand(webhooksVerifyCommand())
    .addCommand(webhooksTestReceiverCommand())
    .addCommand(webhooksListenCommand());
}
