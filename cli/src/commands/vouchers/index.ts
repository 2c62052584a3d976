import { Command } from 'commander';
import { vouchersIssueCommand } from './issue.js';
import { vouchersStatusCommand } from './status.js';

export function vouchersCommand(): Command {
  return new Command('vouchers')
    .description('Issue a coupon or storecard to every member of a tag')
    .addCommand(vouchersIssueCommand())
    .addCommand(vouchersStatusCommand());
}
