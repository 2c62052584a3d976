import { Command, Option } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { ExportOptions } from '../../services/export.js';

export function membersExportCommand(): Command {
  return new Command('export')
    .description('Stream every member of the brand as CSV or JSON Lines')
    .addOption(
      new Option('--format <format>', 'csv (default) or jsonl (the default with --json)').choices(['csv', 'jsonl']),
    )
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .option('--per-page <n>', 'members per request, at most 1000', '1000')
    .addHelpText(
      'after',
      examples(
        ['loyalty members export > members.csv', 'all members of the default brand as CSV'],
        ['loyalty members export --format jsonl --brand brand-acme | jq -r .email', 'JSON Lines into another tool'],
        ['loyalty members export -o members.csv', 'to a file, with progress on stderr'],
      ),
    )
    .action(async (options: ExportOptions, command: Command) => {
      await (await import('../../services/export.js')).exportMembers(await contextOf(command), options);
    });
}
