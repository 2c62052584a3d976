import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function sandboxResetCommand(): Command {
  return new Command('reset')
    .description('Put the sandbox back to its fixtures (data, jobs, deliveries, clock), without a restart')
    .option('--yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      examples(['loyalty sandbox reset', 'asks first on a terminal'], ['loyalty sandbox reset --yes', 'in scripts']),
    )
    .action(async (options: { yes?: boolean }, command: Command) => {
      await (await import('../../services/sandbox.js')).resetSandbox(await contextOf(command), options.yes);
    });
}
