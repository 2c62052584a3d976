import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { TailOptions } from '../../services/logs/logs.js';
import { logFilterOptions } from './options.js';

export function logsTailCommand(): Command {
  const command = new Command('tail').description(
    "Follow the organization's API requests as they happen (like `stripe logs tail`); Ctrl-C to stop",
  );
  for (const option of logFilterOptions()) command.addOption(option);
  return command
    .option('--wait <seconds>', 'long-poll time per request (1 to 30)', '25')
    .addHelpText(
      'after',
      examples(
        ['loyalty logs tail', 'every request from now on'],
        ['loyalty logs tail --status 4xx --path /members', 'failed requests to the members routes'],
        ['loyalty logs tail --since 10m', 'the last ten minutes, then live'],
        ['loyalty logs tail --json | jq -c "select(.status >= 500)"', 'one JSON object per request'],
      ),
    )
    .addHelpText(
      'after',
      `
One line per request: time, status, method, route template, duration, request id and the error
code of an error body. Requests of every client of the organization are shown (not those of
\`logs tail\` itself). Entries appear a fraction of a second after their response.
`,
    )
    .action(async (options: TailOptions, cmd: Command) => {
      await (await import('../../services/logs/logs.js')).tail(await contextOf(cmd), options);
    });
}
