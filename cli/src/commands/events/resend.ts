import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function eventsResendCommand(): Command {
  return new Command('resend')
    .description('Queue a delivery of one event to one webhook subscription now')
    .argument('<event-id>', 'event id (from `loyalty webhooks deliveries` or GET /events)')
    .requiredOption('--subscription <id>', 'an enabled subscription of the event’s organization')
    .addHelpText(
      'after',
      examples(['loyalty events resend 6f1e… --subscription 3c9e…', 'the receiver lost it: send it again']),
    )
    .addHelpText(
      'after',
      '\nThe body and message id are the event’s, as in every delivery; receivers de-duplicate on Loyalty-Message-Id.\nThe filter and event types of the subscription do not apply. Follow it with `loyalty webhooks deliveries <id>`.\n',
    )
    .action(async (eventId: string, options: { subscription: string }, command: Command) => {
      await (await import('../../services/events/resend.js')).resendEvent(await contextOf(command), eventId, options);
    });
}
