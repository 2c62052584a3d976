import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { SimulateOptions } from '../../services/wallet/simulate.js';

export function walletSimulateCommand(): Command {
  return new Command('simulate')
    .description(
      "Behave as a phone holding a pass: download and verify it, register, and print each update's changes until Ctrl-C (sandbox)",
    )
    .argument('<pass-code>', 'the pass code (pass_code, as in its wallet link)')
    .option('--no-verify', 'skip the check of the signature against the server’s sandbox CA')
    .addHelpText(
      'after',
      examples(
        ['loyalty wallet simulate SC-7H2K9Q', 'follow a storecard: an earn prints "balance 120 → 170"'],
        ['loyalty wallet simulate SC-7H2K9Q --json', 'one JSON object per line, for scripts'],
      ),
    )
    .addHelpText(
      'after',
      [
        'It downloads /wallet/<code>.pkpass, checks it as `loyalty wallet inspect --ca` does against the',
        "server's /sandbox/wallet/ca.pem, registers a device with the pass's web service (Apple's protocol),",
        'then waits for pushes in the sandbox push sink. Each push: the updated serial numbers, the new',
        'version (If-Modified-Since) and its changes. Ctrl-C unregisters the device. Needs a server in',
        'sandbox mode (LOYALTY_SANDBOX): a real server sends pushes to APNs, which a simulator cannot receive.',
        '',
      ].join('\n'),
    )
    .action(async (code: string, options: SimulateOptions, command: Command) => {
      await (await import('../../services/wallet/simulate.js')).simulateCommand(
        await contextOf(command),
        code,
        options,
      );
    });
}
