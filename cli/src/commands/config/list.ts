import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function configListCommand(): Command {
  return new Command('list')
    .description('List every setting with where its value comes from (secrets masked)')
    .addHelpText(
      'after',
      examples(
        ['loyalty config list', 'settings of the default profile'],
        ['LOYALTY_PROFILE=staging loyalty config list --json', 'another profile, as JSON'],
      ),
    )
    .action(async (_options: object, command: Command) =>
      (await import('../../services/config/config.js')).listConfig(await contextOf(command)),
    );
}
