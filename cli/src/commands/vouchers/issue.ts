import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { IssueOptions } from '../../services/vouchers/vouchers.js';
import { noProgressOption, voucherOptions } from '../options.js';

export function vouchersIssueCommand(): Command {
  const command = new Command('issue')
    .description('Start a voucher job for a tag; --wait shows it live until it is done')
    .requiredOption('--tag <tag>', 'tag UUID or external reference');
  for (const option of voucherOptions()) command.addOption(option);
  return command
    .option('--expires <date>', 'coupon pass expiry: YYYY-MM-DD or "never" (default: the coupon\'s own)')
    .option('--wait', 'follow the job until it is done (processed, issued, skipped, failed, rate, ETA)')
    .addOption(noProgressOption())
    .addHelpText(
      'after',
      examples(
        ['loyalty vouchers issue --tag vip --coupon coupon-welcome --wait', 'issue and watch'],
        ['loyalty vouchers issue --tag vip --storecard card-points', 'start and return the job id'],
        [
          'loyalty vouchers issue --tag vip --coupon coupon-welcome --expires 2026-12-31 --wait --json',
          'end state as JSON',
        ],
      ),
    )
    .addHelpText(
      'after',
      '\nIssuing again is safe: members who already received the voucher through the tag are skipped.\nExit codes with --wait: 0 done, 1 job failed, 3 some members failed.\n',
    )
    .action(async (options: IssueOptions, command: Command) => {
      await (await import('../../services/vouchers/vouchers.js')).issueVouchers(await contextOf(command), options);
    });
}
