import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function tagsListCommand(): Command {
  return new Command('list')
    .description('List tags (only those of --brand when the flag is given)')
    .addHelpText(
      'after',
      examples(
        ['loyalty tags list', 'all tags'],
        ['loyalty tags list --brand brand-acme --json', 'tags of one brand, as JSON'],
      ),
    )
    .action(async (_options: object, command: Command) => {
      await (await import('../../services/tags/tags.js')).listTags(await contextOf(command));
    });
}
