import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function membersGetCommand(): Command {
  return new Command('get')
    .description('Show a member: profile, subscription and passes')
    .argument('<member>', 'member UUID or e-mail address')
    .addHelpText(
      'after',
      examples(
        ['loyalty members get ada@example.org', 'look a member up by e-mail'],
        ['loyalty members get 0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d --json', 'by UUID, as JSON'],
      ),
    )
    .action(async (member: string, _options: object, command: Command) => {
      await (await import('../../services/members/members.js')).showMember(await contextOf(command), member);
    });
}
