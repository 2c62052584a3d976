import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function membersDeleteCommand(): Command {
  return new Command('delete')
    .description('Remove a member from the brand with all its links to the brand (irreversible)')
    .argument('<member>', 'member UUID or e-mail address')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      examples(
        ['loyalty members delete ada@example.org', 'asks for confirmation'],
        ['loyalty members delete 0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d --yes', 'from a script'],
      ),
    )
    .action(async (member: string, options: { yes?: boolean }, command: Command) => {
      await (await import('../../services/members/members.js')).deleteMember(
        await contextOf(command),
        member,
        options.yes,
      );
    });
}
