import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function configSetCommand(): Command {
  return new Command('set')
    .description('Save a setting in the profile (api_url, brand, client_id; secrets go through `loyalty login`)')
    .argument('<key>', 'api_url, brand or client_id')
    .argument('<value>')
    .addHelpText(
      'after',
      examples(
        ['loyalty config set brand brand-acme', 'default brand for brand-scoped commands'],
        [
          'loyalty --profile staging config set api_url https://staging.example.com',
          'point a profile at another server',
        ],
      ),
    )
    .action(async (key: string, value: string, _options: object, command: Command) =>
      (await import('../../services/config/config.js')).setConfig(await contextOf(command), key, value),
    );
}
