import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { ListOptions } from '../../services/logs/logs.js';
import { logFilterOptions } from './options.js';

export function logsListCommand(): Command {
  const command = new Command('list').description("Show the organization's latest API requests, newest first");
  for (const option of logFilterOptions()) command.addOption(option);
  return command
    .option('--limit <n>', 'entries per page, 1 to 100 (default 50)')
    .option('--cursor <cursor>', 'older entries: the cursor the previous page printed')
    .addHelpText(
      'after',
      examples(
        ['loyalty logs list --status 5xx', 'the latest server errors'],
        ['loyalty logs list --request-id 2b1f0c9e-…', 'one request, found by the id a response carried'],
      ),
    )
    .action(async (options: ListOptions, cmd: Command) => {
      await (await import('../../services/logs/logs.js')).list(await contextOf(cmd), options);
    });
}
