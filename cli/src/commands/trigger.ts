import { Command } from 'commander';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import type { TriggerOptions } from '../services/trigger/index.js';
import { RECIPES, TRIGGER_TYPES } from '../services/trigger/recipes.js';
import { organizationOption } from './options.js';

const recipeHelp = TRIGGER_TYPES.map((type) => `  ${type.padEnd(16)} ${RECIPES[type].does}`).join('\n');

export function triggerCommand(): Command {
  return new Command('trigger')
    .description('Make the server emit a real event of a type, creating test data for it (like `stripe trigger`)')
    .argument('<event-type>', `one of ${TRIGGER_TYPES.join(', ')}`)
    .option('--coupon <id>', 'coupon to issue (coupon.issued, coupon.redeemed)')
    .option('--storecard <id>', 'storecard whose points change (points.changed)')
    .addOption(organizationOption('organization of the event feed (needed when the token has several)'))
    .option('--wait [seconds]', 'wait for the event in the event feed (default 30 s); exit 1 if it does not show')
    .addHelpText(
      'after',
      `\nWhat each event type creates (in --brand, or the first brand the token can see):\n${recipeHelp}\n` +
        'Test data: members trigger+<random>@example.test named "Test Trigger", unsubscribed from marketing;\n' +
        'points transactions with reference trigger-<random>. The token needs members.store and passes.store,\n' +
        'and webhooks.get to look the event up in the feed.',
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty trigger member.created', 'a test member; prints its id and the event id'],
        ['loyalty trigger coupon.redeemed --coupon coupon-welcome --wait', 'issue and redeem a coupon pass'],
        ['loyalty trigger points.changed --storecard card-points --json', 'the created ids and the event id as JSON'],
        [
          'loyalty trigger coupon.issued --coupon coupon-welcome',
          'with `loyalty webhooks listen --forward-to <url>` running: a delivery to a local receiver',
        ],
      ),
    )
    .action(async (type: string, options: TriggerOptions, command: Command) => {
      await (await import('../services/trigger/index.js')).trigger(await contextOf(command), type, options);
    });
}
