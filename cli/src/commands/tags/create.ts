import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function tagsCreateCommand(): Command {
  return new Command('create')
    .description('Create a tag in the brand')
    .argument('<label>', 'human readable label')
    .requiredOption('--ref <external-reference>', 'your identifier for the tag (unique per brand)')
    .addHelpText(
      'after',
      examples(['loyalty tags create "VIP customers" --ref vip', 'create a tag you can address as "vip"']),
    )
    .action(async (label: string, options: { ref: string }, command: Command) => {
      await (await import('../../services/tags/tags.js')).createTag(await contextOf(command), label, options.ref);
    });
}
