import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksRotateSecretCommand(): Command {
  return new Command('rotate-secret')
    .description('Issue a new signing secret; the previous one stays valid for a while')
    .argument('<id>', 'subscription id')
    .option('--print-secret', 'print only the new secret')
    .addHelpText(
      'after',
      examples([
        '(umask 077; loyalty webhooks rotate-secret 3c9e… --print-secret > secret.txt)',
        'rotate and save, readable only by you',
      ]),
    )
    .action(async (id: string, options: { printSecret?: boolean }, command: Command) => {
      await (await import('../../services/webhooks/webhooks.js')).rotateSecret(
        await contextOf(command),
        id,
        options.printSecret,
      );
    });
}
