import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import { refusedSecretOption } from '../../secrets.js';
import type { TestReceiverOptions } from '../../services/webhooks/test-receiver.js';

export function webhooksTestReceiverCommand(): Command {
  return new Command('test-receiver')
    .description(
      'Score a webhook receiver: send it signed deliveries, good and bad, and check its answers (exit 0 all pass, 3 some fail)',
    )
    .argument('<url>', "the receiver's URL, e.g. http://localhost:8080/webhooks")
    .option('--secret-file <path>', 'read the receiver\'s signing secret from a file ("-" reads stdin)')
    .option('--secret-stdin', "read the receiver's signing secret from stdin")
    .addOption(
      refusedSecretOption(
        '--secret',
        'signing secret',
        '--secret-file <path>, --secret-stdin, or the LOYALTY_WEBHOOK_SECRET environment variable',
      ),
    )
    .option('--timeout <seconds>', 'how long to wait for each answer (the API waits 5 s for an acknowledgement)', '5')
    .addHelpText(
      'after',
      examples(
        [
          'loyalty webhooks test-receiver http://localhost:8080/webhooks --secret-file secret.txt',
          'score a local receiver',
        ],
        [
          'loyalty webhooks test-receiver https://shop.example/hooks --secret-file s.txt --json > report.json',
          'machine-readable results, e.g. in CI (exit 3 when a case fails)',
        ],
      ),
    )
    .addHelpText(
      'after',
      [
        'Cases, sent in this order, each a member.created event with made-up UUIDs, signed like the server',
        'signs (Loyalty-Signature and webhook-id/webhook-timestamp/webhook-signature):',
        '  valid              a correct delivery: 2xx within --timeout',
        '  tampered_body      the body changed after signing: 4xx',
        '  wrong_secret       signed with another secret: 4xx',
        '  stale_timestamp    webhook-timestamp 10 minutes old (tolerance 5 minutes): 4xx',
        '  missing_signature  no signature headers: 4xx',
        '  rotation           two signatures, a wrong one first: 2xx',
        '  duplicate          the same webhook-id twice (a retry): the second answer must be 2xx',
        '4xx means a final refusal: 408 and 429 are retried by the server like 5xx. Redirects are not followed: a',
        '3xx fails its case. Each case is reported with its answer, time in ms and, when it fails, a hint.',
        '',
        'Duplicates: only the receiver knows whether it processed the event twice; this command can check only',
        'that the repeat is acknowledged. The receiver examples (sdk/examples/webhooks-*.mjs) verify every',
        'delivery, answer 204 again and hand the event to their handler again: de-duplicate there on event.id',
        '(= webhook-id).',
        '',
        'The secret comes from --secret-file or --secret-stdin, or else from LOYALTY_WEBHOOK_SECRET; never as a',
        'flag value.',
        '',
      ].join('\n'),
    )
    .action(async (url: string, options: TestReceiverOptions, command: Command) => {
      await (await import('../../services/webhooks/test-receiver.js')).testReceiverCommand(
        await contextOf(command),
        url,
        options,
      );
    });
}
