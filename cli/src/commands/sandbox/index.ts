import { Command } from 'commander';
import { examples } from '../../help.js';
import { sandboxClockCommand } from './clock.js';
import { sandboxCreateCommand } from './create.js';
import { sandboxDeleteCommand } from './delete.js';
import { sandboxResetCommand } from './reset.js';

export function sandboxCommand(): Command {
  return new Command('sandbox')
    .description(
      'Steer a reference server in sandbox mode (LOYALTY_SANDBOX): its clock, a reset, throwaway organizations',
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty sandbox clock advance 7d', "move the server's clock a week ahead (coupons expire, retries fall due)"],
        ['loyalty sandbox reset --yes', 'back to the fixtures, without a restart'],
        ['eval "$(loyalty sandbox create --ttl 1h --env)"', 'a throwaway organization of its own for a CI job'],
      ),
    )
    .addCommand(sandboxClockCommand())
    .addCommand(sandboxResetCommand())
    .addCommand(sandboxCreateCommand())
    .addCommand(sandboxDeleteCommand());
}
