import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function configGetCommand(): Command {
  return new Command('get')
    .description('Print one setting (as resolved from flags, environment and profile)')
    .argument('<key>', 'api_url, brand, client_id, client_secret or token')
    .option('--reveal', 'print a secret unmasked')
    .addHelpText(
      'after',
      examples(
        ['loyalty config get api_url', 'the API URL in effect'],
        ['curl -H "Authorization: Bearer $(loyalty config get token --reveal)" …', 'use the stored token elsewhere'],
      ),
    )
    .action(async (key: string, options: { reveal?: boolean }, command: Command) =>
      (await import('../../services/config/config.js')).getConfig(
        await contextOf(command),
        key,
        Boolean(options.reveal),
      ),
    );
}
