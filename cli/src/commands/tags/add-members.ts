import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples, speedHelp } from '../../help.js';
import { fileOption } from '../options.js';

export function tagsAddMembersCommand(): Command {
  return new Command('add-members')
    .description('Put members on a tag: UUIDs or e-mails (e-mails are looked up), 2000 per request')
    .argument('<tag>', 'tag UUID or external reference')
    .argument('[members...]', 'member UUIDs or e-mail addresses')
    .addOption(
      fileOption(
        'read members from a file: one per line, or a CSV (the first UUID or e-mail on each line); - for stdin',
      ),
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty tags add-members vip ada@example.org grace@example.org', 'a few members by e-mail'],
        ['loyalty tags add-members vip --file vip.csv', 'everyone in a file'],
        ['loyalty members export | loyalty tags add-members everyone --file -', 'every member of the brand'],
      ),
    )
    .addHelpText(
      'after',
      `${speedHelp('members')}\nE-mails are looked up first (one more request per 2,000). Exit code 3 when some e-mails are not members\nor lines could not be read.\n`,
    )
    .action(async (tag: string, members: string[], options: { file?: string }, command: Command) => {
      await (await import('../../services/tags/tags.js')).addMembersToTag(
        await contextOf(command),
        tag,
        members,
        options.file,
      );
    });
}
