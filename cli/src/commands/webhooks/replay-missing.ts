import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function webhooksReplayMissingCommand(): Command {
  return new Command('replay-missing')
    .description('Deliver the events of a time window that a subscription matches and never received')
    .argument('<id>', 'subscription id')
    .requiredOption('--since <time>', 'start: a duration ago (90s, 30m, 2h, 7d) or an ISO 8601 time')
    .option('--until <time>', 'end (default: now), same forms as --since')
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks replay-missing 3c9e… --since 2d', 'what it missed while it was disabled'],
        [
          'loyalty webhooks replay-missing 3c9e… --since 2026-11-23T06:00:00Z --until 2026-11-23T08:00:00Z',
          'an exact window',
        ],
      ),
    )
    .addHelpText(
      'after',
      "\nOnly events without a delivery to this subscription are sent (once, however often you replay), in event order.\nEvents older than the server's retention period are gone. Failed deliveries: `loyalty webhooks recover`.\n",
    )
    .action(async (id: string, options: { since: string; until?: string }, command: Command) => {
      await (await import('../../services/webhooks/webhook-lifecycle.js')).replayMissing(
        await contextOf(command),
        id,
        options,
      );
    });
}
