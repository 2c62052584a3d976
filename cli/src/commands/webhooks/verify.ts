import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { refusedSecretOption } from '../../secrets.js';
import type { VerifyOptions } from '../../services/webhooks/verify.js';
import { collect } from '../options.js';

export function webhooksVerifyCommand(): Command {
  return new Command('verify')
    .description('Check the signature of a captured delivery offline (exit 0 valid, 1 invalid, with the reason)')
    .argument('[body-file]', 'file with the exact body bytes; - or nothing reads stdin')
    .option(
      '--secret-file <path>',
      'read the signing secret from a file ("-" reads stdin); one secret per line, or repeat the flag, for both secrets during a rotation',
      collect,
      [],
    )
    .option('--secret-stdin', 'read the signing secret from stdin (the body then comes from a file)')
    .addOption(
      refusedSecretOption(
        '--secret',
        'signing secret',
        '--secret-file <path>, --secret-stdin, or the LOYALTY_WEBHOOK_SECRET environment variable',
      ),
    )
    .option('--signature <hex>', 'the Loyalty-Signature header value')
    .option(
      '--headers-file <path>',
      'the captured headers: JSON object or "Name: value" lines (checks webhook-signature and its timestamp too)',
    )
    .option('--tolerance <seconds>', 'accepted age of webhook-timestamp', '300')
    .option(
      '--explain',
      'when a signature fails, try the usual mistakes (re-serialized JSON, newline, CRLF, encoding, secret whitespace or prefix, key form, rotation, clock) and name the one that matches',
    )
    .option(
      '--previous-secret-file <path>',
      'with --explain: a secret that is no longer (or not yet) the current one, e.g. from before a rotation; repeatable',
      collect,
      [],
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty webhooks verify body.json --secret-file secret.txt --signature 5d41…', 'check Loyalty-Signature'],
        [
          'loyalty webhooks verify body.json --secret-file secret.txt --headers-file headers.txt',
          'check every signature header and the timestamp',
        ],
        [
          'loyalty webhooks verify body.json --secret-file s.txt --headers-file h.json --tolerance 86400',
          'a capture from yesterday',
        ],
        [
          'loyalty webhooks verify body.json --secret-file s.txt --headers-file h.txt --explain',
          'a failing delivery: which usual mistake matches, and its fix',
        ],
        [
          'loyalty webhooks verify body.json --secret-file new.txt --previous-secret-file old.txt --headers-file h.txt --explain',
          'is it signed with the secret from before the rotation?',
        ],
        [
          'pass show shop/whsec | loyalty webhooks verify body.json --secret-stdin --headers-file headers.txt',
          'the secret piped from a password manager',
        ],
        [
          'export LOYALTY_WEBHOOK_SECRET=$(loyalty webhooks listen --print-secret)\n  $ loyalty webhooks verify body.json --headers-file headers.txt',
          'a delivery from `webhooks listen`, secret from the environment',
        ],
      ),
    )
    .addHelpText(
      'after',
      [
        'The secret comes from --secret-file or --secret-stdin, or else from the environment variable',
        'LOYALTY_WEBHOOK_SECRET. It is never taken as a flag value (`--secret whsec_…` is refused):',
        'other users of the machine could read it in the process list.',
        '',
      ].join('\n'),
    )
    .action(async (body: string | undefined, options: VerifyOptions, command: Command) => {
      await (await import('../../services/webhooks/verify.js')).verifyCommand(await contextOf(command), body, options);
    });
}
