import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { refusedSecretOption } from '../../secrets.js';

export function sandboxCreateCommand(): Command {
  return new Command('create')
    .description('Create a throwaway sandbox organization (brand, coupon, storecard, two clients) for one test run')
    .option(
      '--ttl <duration>',
      'time to live in real time, e.g. 30m or 2h, at most 7d (server default 1h); then it is removed',
    )
    .option('--name <name>', 'its name (default "Sandbox <id>")')
    .option('--env', 'print `export LOYALTY_…=` lines for `eval` (the new admin client, brand, ids)')
    .addOption(
      refusedSecretOption(
        '--operator-token',
        'operator credential',
        'the LOYALTY_SANDBOX_OPERATOR_TOKEN environment variable',
      ),
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty sandbox create --ttl 2h --name "my branch"', 'the ids and both clients, secrets shown once'],
        ['eval "$(loyalty sandbox create --ttl 1h --env)"', 'in a CI step: later commands run as the new organization'],
        ['loyalty sandbox create --json', 'the whole answer'],
      ),
    )
    .addHelpText(
      'after',
      "Credentials: LOYALTY_SANDBOX_OPERATOR_TOKEN (the server's operator credential) when set, else the\n" +
        'usual ones (LOYALTY_CLIENT_ID/LOYALTY_CLIENT_SECRET or a profile) of a client holding sandbox.create,\n' +
        "such as the demo fixtures' sandbox-ci. Each CI job takes its own organization: its data, clock and\n" +
        'reset are its own. Remove it with `loyalty sandbox delete "$LOYALTY_ORGANIZATION_ID"`.\n',
    )
    .action(async (options: { ttl?: string; name?: string; env?: boolean }, command: Command) => {
      await (await import('../../services/sandbox/sandbox-organizations.js')).createSandboxOrganization(
        await contextOf(command),
        options,
      );
    });
}
