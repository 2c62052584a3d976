import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { voucherOptions } from '../options.js';

export function passesIssueCommand(): Command {
  const command = new Command('issue')
    .description('Issue a coupon or storecard pass to one member (a storecard is issued once per member)')
    .argument('<member>', 'member UUID or e-mail address');
  for (const option of voucherOptions()) command.addOption(option);
  return command
    .option('--expires <date>', 'coupon pass expiry: YYYY-MM-DD or "never"')
    .addHelpText(
      'after',
      examples(
        ['loyalty passes issue ada@example.org --coupon coupon-welcome', 'a coupon pass; prints code and wallet link'],
        ['loyalty passes issue ada@example.org --storecard card-points --json', "the member's storecard pass"],
      ),
    )
    .action(
      async (member: string, options: { coupon?: string; storecard?: string; expires?: string }, command: Command) => {
        await (await import('../../services/passes/passes.js')).issuePass(await contextOf(command), member, options);
      },
    );
}
