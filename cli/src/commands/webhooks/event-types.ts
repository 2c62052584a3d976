import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksEventTypesCommand(): Command {
  return new Command('event-types')
    .description('List the event types the server sends, with their JSON Schemas (--json)')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks event-types', 'type, whether one can subscribe, summary'],
        [
          'loyalty webhooks event-types --json | jq \'.[] | select(.type=="coupon.issued") | .schema\'',
          "one type's JSON Schema",
        ],
      ),
    )
    .action(async (_options: object, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).listEventTypes(await contextOf(command));
    });
}
