import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { usageError } from '../../errors.js';
import { brandFlagsOf, collect } from '../options.js';

type SampleFlags = { event?: string; points?: string; pointsType?: string[] };

export function webhooksTestCommand(): Command {
  return (
    new Command('test')
      .description("Send a signed ping event to a subscription's URL now and show how it answered")
      .argument('<id>', 'subscription id')
      .option('--event <type>', 'a sample event of this type: would the subscription deliver it? (the server decides)')
      // Listed for the help; the root's --brand takes the words (brandFlagsOf reads them).
      .option('--brand <id>', "the sample event's brand")
      .option('--points <n>', "the sample points.changed event's amount")
      .option('--points-type <type>', "the sample points.changed event's type: earn, spend or reverse", collect, [])
      .addHelpText(
        'after',
        examples(
          ['loyalty webhooks test 3c9e…', 'does the receiver answer 2xx?'],
          ['loyalty webhooks test 3c9e… --json', 'status, error, time and the start of the answer'],
          [
            'loyalty webhooks test 3c9e… --event points.changed --brand brand-acme --points 50 --points-type earn',
            'would this event pass the filter?',
          ],
        ),
      )
      .addHelpText(
        'after',
        '\nNothing is recorded or retried, and a disabled subscription can be tested before `loyalty webhooks enable`.\nExits 1 when the receiver did not answer 2xx in time.\n',
      )
      .action(async (id: string, options: SampleFlags, command: Command) => {
        const { sampleFromFlags } = await import('../../services/webhooks/subscription-filter.js');
        const { parseEvents } = await import('../../services/webhooks/webhooks.js');
        const [event, ...more] = options.event === undefined ? [] : parseEvents([options.event]);
        if (more.length) throw usageError('A sample event has one type: give --event once, with one type.');
        const sample = sampleFromFlags({ ...options, event, brand: brandFlagsOf(command) });
        await (await import('../../services/webhooks/webhook-lifecycle.js')).testSubscription(
          await contextOf(command),
          id,
          sample,
        );
      })
  );
}
