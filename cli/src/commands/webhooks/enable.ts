import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

const stateCommand = (name: 'enable' | 'disable', description: string, example: [string, string]) =>
  new Command(name)
    .description(description)
    .argument('<id>', 'subscription id')
    .addHelpText('after', examples(example))
    .action(async (id: string, _options: object, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).updateSubscription(
        await contextOf(command),
        id,
        {
          events: [],
          active: name === 'enable',
        },
      );
    });

export const webhooksEnableCommand = (): Command =>
  stateCommand('enable', 'Enable a disabled subscription: failure counters start over, parked deliveries are sent', [
    'loyalty webhooks enable 3c9e…',
    'after fixing the receiver',
  ]).addHelpText(
    'after',
    '\nEvents that happened while it was disabled are not delivered; `loyalty webhooks recover` resends failed ones.\n',
  );

export const webhooksDisableCommand = (): Command =>
  stateCommand('disable', 'Disable a subscription: no new deliveries, waiting ones are parked until it is enabled', [
    'loyalty webhooks disable 3c9e…',
    'during a receiver maintenance',
  ]);
