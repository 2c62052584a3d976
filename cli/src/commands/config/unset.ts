import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function configUnsetCommand(): Command {
  return new Command('unset')
    .description('Remove a setting from the profile')
    .argument('<key>', 'api_url, brand or client_id')
    .addHelpText('after', examples(['loyalty config unset brand', 'forget the default brand']))
    .action(async (key: string, _options: object, command: Command) =>
      (await import('../../services/config/config.js')).setConfig(await contextOf(command), key, undefined),
    );
}
