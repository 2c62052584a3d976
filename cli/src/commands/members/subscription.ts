import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples, speedHelp } from '../../help.js';
import { fileOption } from '../options.js';

export function membersSubscriptionCommand(subscribe: boolean): Command {
  const verb = subscribe ? 'subscribe' : 'unsubscribe';
  return new Command(verb)
    .description(
      `${subscribe ? 'Subscribe' : 'Unsubscribe'} members ${subscribe ? 'to' : 'from'} the brand's marketing (2000 per request)`,
    )
    .argument('[emails...]', 'e-mail addresses')
    .addOption(fileOption('read e-mails from a file, one per line or the first address on each CSV line (- for stdin)'))
    .addHelpText(
      'after',
      examples(
        [`loyalty members ${verb} ada@example.org`, `${verb} one member`],
        [`loyalty members ${verb} --file list.csv`, `${verb} everyone in a file`],
      ),
    )
    .addHelpText('after', speedHelp('e-mails'))
    .action(async (emails: string[], options: { file?: string }, command: Command) => {
      const ctx = await contextOf(command);
      const { setSubscription } = await import('../../services/members/members.js');
      await setSubscription(ctx, subscribe, emails, options.file);
    });
}
