import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { IssueOptions } from '../../services/vouchers.js';

export function vouchersCommand(): Command {
  const vouchers = new Command('vouchers').description('Issue a coupon or storecard to every member of a tag');
  vouchers.addCommand(
    new Command('issue')
      .description('Start a voucher job for a tag; --wait shows it live until it is done')
      .requiredOption('--tag <tag>', 'tag UUID or external reference')
      .option('--coupon <id>', 'coupon to issue')
      .option('--storecard <id>', 'storecard to issue')
      .option('--expires <date>', 'coupon pass expiry: YYYY-MM-DD or "never" (default: the coupon\'s own)')
      .option('--wait', 'follow the job until it is done (processed, issued, skipped, failed, rate, ETA)')
      .option('--no-progress', 'plain progress lines even on a terminal')
      .addHelpText('after', examples(
        ['loyalty vouchers issue --tag vip --coupon coupon-welcome --wait', 'issue and watch'],
        ['loyalty vouchers issue --tag vip --storecard card-points', 'start and return the job id'],
        ['loyalty vouchers issue --tag vip --coupon coupon-welcome --expires 2026-12-31 --wait --json', 'end state as JSON'],
      ))
      .addHelpText('after', '\nIssuing again is safe: members who already received the voucher through the tag are skipped.\nExit codes with --wait: 0 done, 1 job failed, 3 some members failed.\n')
      .action(async (options: IssueOptions, command: Command) => (await import('../../services/vouchers.js')).issueVouchers(await contextOf(command), options)),
  );
  vouchers.addCommand(
    new Command('status')
      .description('Show a voucher job (with --wait, follow it until it is done)')
      .argument('<job>', 'job id')
      .requiredOption('--tag <tag>', 'the tag the job was started for')
      .option('--wait', 'follow the job until it is done')
      .option('--no-progress', 'plain progress lines even on a terminal')
      .addHelpText('after', examples(['loyalty vouchers status 5f0c… --tag vip', 'current counters'], ['loyalty vouchers status 5f0c… --tag vip --wait', 'follow it']))
      .action(async (job: string, options: { tag: string; wait?: boolean; progress: boolean }, command: Command) =>
        (await import('../../services/vouchers.js')).voucherStatus(await contextOf(command), job, options.tag, Boolean(options.wait), options.progress),
      ),
  );
  return vouchers;
}
