import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { VerifyOptions } from '../../services/verify.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function webhooksVerifyCommand(): Command {
  return new Command('verify')
    .description('Check the signature of a captured delivery offline (exit 0 valid, 1 invalid, with the reason)')
    .argument('[body]', 'file with the exact body bytes; - or nothing reads stdin')
    .option('--secret <whsec>', 'signing secret; repeat for both secrets during a rotation', collect, [])
    .option('--secret-file <path>', 'read the secret from a file (or set LOYALTY_WEBHOOK_SECRET)')
    .option('--signature <hex>', 'the Loyalty-Signature header value')
    .option('--headers-file <path>', 'the captured headers: JSON object or "Name: value" lines (checks webhook-signature and its timestamp too)')
    .option('--tolerance <seconds>', 'accepted age of webhook-timestamp', '300')
    .addHelpText('after', examples(
      ['loyalty webhooks verify body.json --secret-file secret.txt --signature 5d41…', 'check Loyalty-Signature'],
      ['loyalty webhooks verify body.json --secret-file secret.txt --headers-file headers.txt', 'check every signature header and the timestamp'],
      ['loyalty webhooks verify body.json --secret-file s.txt --headers-file h.json --tolerance 86400', 'a capture from yesterday'],
    ))
    .action(async (body: string | undefined, options: VerifyOptions, command: Command) => {
      await (await import('../../services/verify.js')).verifyCommand(await contextOf(command), body, options);
    });
}
