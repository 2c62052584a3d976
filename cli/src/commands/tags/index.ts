import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function tagsCommand(): Command {
  const tags = new Command('tags').description('Tags group members into segments (for voucher jobs)');
  tags.addCommand(
    new Command('list')
      .description('List tags (only those of --brand when the flag is given)')
      .addHelpText('after', examples(['loyalty tags list', 'all tags'], ['loyalty tags list --brand brand-acme --json', 'tags of one brand, as JSON']))
      .action(async (_options: object, command: Command) => (await import('../../services/tags.js')).listTags(await contextOf(command))),
  );
  tags.addCommand(
    new Command('create')
      .description('Create a tag in the brand')
      .argument('<label>', 'human readable label')
      .requiredOption('--ref <external-reference>', 'your identifier for the tag (unique per brand)')
      .addHelpText('after', examples(['loyalty tags create "VIP customers" --ref vip', 'create a tag you can address as "vip"']))
      .action(async (label: string, options: { ref: string }, command: Command) => (await import('../../services/tags.js')).createTag(await contextOf(command), label, options.ref)),
  );
  tags.addCommand(
    new Command('delete')
      .description('Delete a tag')
      .argument('<tag>', 'tag UUID or external reference')
      .addHelpText('after', examples(['loyalty tags delete vip', 'by external reference']))
      .action(async (tag: string, _options: object, command: Command) => (await import('../../services/tags.js')).deleteTag(await contextOf(command), tag)),
  );
  tags.addCommand(tagsAddMembersCommand());
  return tags;
}

function tagsAddMembersCommand(): Command {
  return new Command('add-members')
    .description('Put members on a tag: UUIDs or e-mails (e-mails are looked up), 2000 per request')
    .argument('<tag>', 'tag UUID or external reference')
    .argument('[members...]', 'member UUIDs or e-mail addresses')
    .option('-f, --file <path>', 'read members from a file: one per line, or a CSV (the first UUID or e-mail on each line); - for stdin')
    .addHelpText('after', examples(
      ['loyalty tags add-members vip ada@example.org grace@example.org', 'a few members by e-mail'],
      ['loyalty tags add-members vip --file vip.csv', 'everyone in a file'],
      ['loyalty members export | loyalty tags add-members everyone --file -', 'every member of the brand'],
    ))
    .addHelpText('after', '\nExit code 3 when some e-mails are not members or lines could not be read.\n')
    .action(async (tag: string, members: string[], options: { file?: string }, command: Command) => {
      await (await import('../../services/tags.js')).addMembersToTag(await contextOf(command), tag, members, options.file);
    });
}
