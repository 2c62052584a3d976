import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function tagsDeleteCommand(): Command {
  return new Command('delete')
    .description('Delete a tag')
    .argument('<tag>', 'tag UUID or external reference')
    .addHelpText('after', examples(['loyalty tags delete vip', 'by external reference']))
    .action(async (tag: string, _options: object, command: Command) => {
      await (await import('../../services/tags/tags.js')).deleteTag(await contextOf(command), tag);
    });
}
