import { Command } from 'commander';
import { tagsAddMembersCommand } from './add-members.js';
import { tagsCreateCommand } from './create.js';
import { tagsDeleteCommand } from './delete.js';
import { tagsListCommand } from './list.js';

export function tagsCommand(): Command {
  return new Command('tags')
    .description('Tags group members into segments (for voucher jobs)')
    .addCommand(tagsListCommand())
    .addCommand(tagsCreateCommand())
    .addCommand(tagsDeleteCommand())
    .addCommand(tagsAddMembersCommand());
}
