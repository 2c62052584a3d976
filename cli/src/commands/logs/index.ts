import { Command } from 'commander';
import { logsListCommand } from './list.js';
import { logsTailCommand } from './tail.js';

export function logsCommand(): Command {
  return new Command('logs')
    .description("The organization's request log: follow API requests live, or list the latest")
    .addCommand(logsTailCommand())
    .addCommand(logsListCommand());
}
