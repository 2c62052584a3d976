import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { noProgressOption } from '../options.js';

export function vouchersStatusCommand(): Command {
  return new Command('status')
    .description('Show a voucher job (with --wait, follow it until it is done)')
    .argument('<job>', 'job id')
    .requiredOption('--tag <tag>', 'the tag the job was started for')
    .option('--wait', 'follow the job until it is done')
    .addOption(noProgressOption())
    .addHelpText(
      'after',
      examples(
        ['loyalty vouchers status 5f0c… --tag vip', 'current counters'],
        ['loyalty vouchers status 5f0c… --tag vip --wait', 'follow it'],
      ),
    )
    .action(async (job: string, options: { tag: string; wait?: boolean; progress: boolean }, command: Command) => {
      await (await import('../../services/vouchers/vouchers.js')).voucherStatus(
        await contextOf(command),
        job,
        options.tag,
        Boolean(options.wait),
        options.progress,
      );
    });
}
