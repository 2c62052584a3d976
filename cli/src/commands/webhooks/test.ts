import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksTestCommand(): Command {
  return new Command('test')
    .description("Send a signed ping event to a subscription's URL now and show how it answered")
    .argument('<id>', 'subscription id')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks test 3c9e…', 'does the receiver answer 2xx?'],
        ['loyalty webhooks test 3c9e… --json', 'status, error, time and the start of the answer'],
      ),
    )
    .addHelpText(
      'after',
      '\nNothing is recorded or retried, and a disabled subscription can be tested before `loyalty webhooks enable`.\nExits 1 when the receiver did not answer 2xx in time.\n',
    )
    .action(async (id: string, _options: object, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).testSubscription(
        await contextOf(command),
        id,
      );
    });
}
