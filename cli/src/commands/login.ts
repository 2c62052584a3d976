import { Command } from 'commander';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { refusedSecretOption } from '../secrets.js';

export function loginCommand(): Command {
  return new Command('login')
    .description('Store client credentials (or a token) in a profile, after checking them against the API')
    .option('--client-id <id>', 'OAuth client id (env LOYALTY_CLIENT_ID; asked for on a terminal)')
    .option(
      '--client-secret-stdin',
      'read the client secret from stdin (env LOYALTY_CLIENT_SECRET; asked for, hidden, on a terminal)',
    )
    .addOption(
      refusedSecretOption(
        '--client-secret',
        'client secret',
        '--client-secret-stdin, the LOYALTY_CLIENT_SECRET environment variable, or the hidden prompt of `loyalty login` on a terminal',
      ),
    )
    .option('--no-verify', 'save without checking the credentials against the API')
    .addHelpText(
      'after',
      examples(
        ['loyalty login', 'log in interactively (asks for client id, secret and brand)'],
        [
          'printf %s "$SECRET" | loyalty login --client-id acme-admin --client-secret-stdin --brand brand-acme',
          'log in from a script; also remember the brand',
        ],
        [
          'loyalty login --profile till --client-id acme-pos-1 --client-secret-stdin < secret.txt',
          'a second profile for a device (webshop orders)',
        ],
        [
          'loyalty login --token-file token.txt --api-url https://loyalty.example.com',
          'store a bearer token for another server',
        ],
      ),
    )
    .addHelpText(
      'after',
      'The profile keeps the API URL and brand given with --api-url/--brand or LOYALTY_API_URL/LOYALTY_BRAND;\n' +
        'on a terminal without a brand, login asks for one. The secret is stored in\n' +
        '$XDG_CONFIG_HOME/loyalty/config.json (mode 0600), never taken as a flag value.\n',
    )
    .action(async (options: { clientId?: string; clientSecretStdin?: boolean; verify: boolean }, command: Command) => {
      await (await import('../services/login/login.js')).login(await contextOf(command), options);
    });
}
