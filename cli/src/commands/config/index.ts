import { Command } from 'commander';
import { configGetCommand } from './get.js';
import { configListCommand } from './list.js';
import { configSetCommand } from './set.js';
import { configUnsetCommand } from './unset.js';

export function configCommand(): Command {
  return new Command('config')
    .description('Show and change settings (flags > environment > profile > defaults)')
    .addCommand(configListCommand())
    .addCommand(configGetCommand())
    .addCommand(configSetCommand())
    .addCommand(configUnsetCommand());
}
