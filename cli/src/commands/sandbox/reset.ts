import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { organizationOption } from '../options.js';

export function sandboxResetCommand(): Command {
  return new Command('reset')
    .description(
      "Put the token's organizations back to their fixtures (data, jobs, deliveries, clock), without a restart",
    )
    .option('--yes', 'do not ask for confirmation (required without a terminal)')
    .addOption(organizationOption("reset only this one of the token's organizations (default: all of them)"))
    .addHelpText(
      'after',
      examples(
        ['loyalty sandbox reset', 'asks first on a terminal'],
        ['loyalty sandbox reset --yes', 'in scripts'],
        ['loyalty sandbox reset --yes --organization org-globex', 'one organization of a token of several'],
      ),
    )
    .action(async (options: { yes?: boolean; organization?: string }, command: Command) => {
      await (await import('../../services/sandbox/sandbox.js')).resetSandbox(await contextOf(command), options);
    });
}
