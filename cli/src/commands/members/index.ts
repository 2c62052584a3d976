import { Command } from 'commander';
import { membersDeleteCommand } from './delete.js';
import { membersExportCommand } from './export.js';
import { membersGetCommand } from './get.js';
import { membersImportCommand } from './import.js';
import { membersSubscriptionCommand } from './subscription.js';
import { membersUpdateCommand } from './update.js';

export function membersCommand(): Command {
  return new Command('members')
    .description('Import, export, look up and change members of a brand')
    .addCommand(membersImportCommand())
    .addCommand(membersExportCommand())
    .addCommand(membersGetCommand())
    .addCommand(membersUpdateCommand())
    .addCommand(membersDeleteCommand())
    .addCommand(membersSubscriptionCommand(true))
    .addCommand(membersSubscriptionCommand(false));
}
