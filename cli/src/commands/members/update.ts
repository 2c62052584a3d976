import { Command, Option } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { PROFILE_FIELDS, profileFieldHelp, type ProfileField } from '../../domain.js';
import { collect } from '../options.js';

const flag = (field: string): string => field.replace(/_/g, '-');

export function membersUpdateCommand(): Command {
  const command = new Command('update')
    .description('Change profile fields of a member (only the fields given change; the e-mail cannot)')
    .argument('<member>', 'member UUID or e-mail address');
  for (const field of PROFILE_FIELDS) {
    command.option(`--${flag(field)} <value>`, profileFieldHelp(field));
  }
  return command
    .addOption(
      new Option('--clear <field>', 'empty a field (repeatable)')
        .choices(PROFILE_FIELDS.map(flag))
        .argParser(collect)
        .default([]),
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty members update ada@example.org --first-name Ada --last-name Lovelace', 'set the name'],
        [
          'loyalty members update ada@example.org --city London --clear phone-number',
          'change one field, empty another',
        ],
      ),
    )
    .action(async (member: string, options: Record<string, string | string[]>, command: Command) => {
      const changes: Partial<Record<ProfileField, string | null>> = {};
      for (const field of PROFILE_FIELDS) {
        const camel = field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
        if (typeof options[camel] === 'string') changes[field] = options[camel];
      }
      for (const cleared of options.clear as string[]) changes[cleared.replace(/-/g, '_') as ProfileField] = null;
      await (await import('../../services/members/members.js')).updateMember(await contextOf(command), member, changes);
    });
}
