import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksRecoverCommand(): Command {
  return new Command('recover')
    .description('Resend every delivery that ended failed in a time window, in event order')
    .argument('<id>', 'subscription id')
    .requiredOption('--since <time>', 'start: a duration ago (90s, 30m, 2h, 7d) or an ISO 8601 time')
    .option('--until <time>', 'end (default: now), same forms as --since')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks recover 3c9e… --since 2h', 'after a two-hour outage of the receiver'],
        ['loyalty webhooks recover 3c9e… --since 2026-11-23T06:00:00Z --until 2026-11-23T08:00:00Z', 'an exact window'],
      ),
    )
    .addHelpText(
      'after',
      "\nEach failed delivery gets one more attempt with the same message id and body; receivers de-duplicate on it.\nDeliveries older than the server's retention period are gone and cannot be recovered.\n",
    )
    .action(async (id: string, options: { since: string; until?: string }, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).recoverDeliveries(
        await contextOf(command),
        id,
        options,
      );
    });
}
