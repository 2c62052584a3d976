import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { InspectCommandOptions } from '../../services/wallet/inspect.js';

export function walletInspectCommand(): Command {
  return new Command('inspect')
    .description(
      'Check a .pkpass offline and name what would make it fail to install, one line per problem with its fix (exit 0 none, 1 problems)',
    )
    .argument('<file>', 'the .pkpass file')
    .option(
      '--ca <path>',
      "PEM certificate(s) the signature's chain must lead to, e.g. a sandbox server's /sandbox/wallet/ca.pem (default: Apple's WWDR, by name)",
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty wallet inspect pass.pkpass', 'a pass signed with a real certificate (chain to Apple WWDR by name)'],
        [
          'curl -so ca.pem http://127.0.0.1:3000/sandbox/wallet/ca.pem\n  $ loyalty wallet inspect pass.pkpass --ca ca.pem',
          'a sandbox pass, its signature checked against the sandbox CA',
        ],
        ['loyalty wallet inspect pass.pkpass --json', 'the problems as JSON: code, message, fix'],
      ),
    )
    .addHelpText(
      'after',
      [
        'Checks: the zip; manifest.json (every file listed, no extra entry, each SHA-1); the signature',
        '(detached PKCS #7 of manifest.json) and its chain; the signer certificate’s dates, and its UID and OU',
        'against passTypeIdentifier and teamIdentifier; icon.png; pass.json’s required keys, W3C dates and',
        'barcodes. It cannot see what only a device knows (a revoked certificate, images of the wrong size).',
        '',
      ].join('\n'),
    )
    .action(async (file: string, options: InspectCommandOptions, command: Command) => {
      await (await import('../../services/wallet/inspect.js')).inspectCommand(await contextOf(command), file, options);
    });
}
