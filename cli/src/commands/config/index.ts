import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function configCommand(): Command {
  const config = new Command('config').description('Show and change settings (flags > environment > profile > defaults)');
  config.addCommand(
    new Command('list')
      .description('List every setting with where its value comes from (secrets masked)')
      .addHelpText('after', examples(['loyalty config list', 'settings of the default profile'], ['LOYALTY_PROFILE=staging loyalty config list --json', 'another profile, as JSON']))
      .action(async (_options: object, command: Command) => (await import('../../services/config.js')).listConfig(await contextOf(command))),
  );
  config.addCommand(
    new Command('get')
      .description('Print one setting (as resolved from flags, environment and profile)')
      .argument('<key>', 'api_url, brand, client_id, client_secret or token')
      .option('--reveal', 'print a secret unmasked')
      .addHelpText('after', examples(['loyalty config get api_url', 'the API URL in effect'], ['curl -H "Authorization: Bearer $(loyalty config get token --reveal)" …', 'use the stored token elsewhere']))
      .action(async (key: string, options: { reveal?: boolean }, command: Command) => (await import('../../services/config.js')).getConfig(await contextOf(command), key, Boolean(options.reveal))),
  );
  config.addCommand(
    new Command('set')
      .description('Save a setting in the profile (api_url, brand, client_id; secrets go through `loyalty login`)')
      .argument('<key>', 'api_url, brand or client_id')
      .argument('<value>')
      .addHelpText('after', examples(['loyalty config set brand brand-acme', 'default brand for brand-scoped commands'], ['loyalty --profile staging config set api_url https://staging.example.com', 'point a profile at another server']))
      .action(async (key: string, value: string, _options: object, command: Command) => (await import('../../services/config.js')).setConfig(await contextOf(command), key, value)),
  );
  config.addCommand(
    new Command('unset')
      .description('Remove a setting from the profile')
      .argument('<key>', 'api_url, brand or client_id')
      .addHelpText('after', examples(['loyalty config unset brand', 'forget the default brand']))
      .action(async (key: string, _options: object, command: Command) => (await import('../../services/config.js')).setConfig(await contextOf(command), key, undefined)),
  );
  return config;
}
