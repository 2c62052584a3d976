import { Command } from 'commander';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import type { ApiCommandOptions } from '../services/api/api-command.js';
import { collect } from './options.js';

export function apiCommand(): Command {
  return new Command('api')
    .description('Call any operation of the API (openapi.yaml) with the CLI’s login, retries and pacing, like `gh api`')
    .argument('<method>', 'GET, POST, PUT, PATCH or DELETE')
    .argument('<path>', 'the concrete path, e.g. /members/3c9e…; a query string is kept')
    .option(
      '-F, --field <key=value>',
      'typed parameter: numbers, true, false, null, @file (@- stdin); repeatable',
      collect,
      [],
    )
    .option('-f, --raw-field <key=value>', 'string parameter; repeatable', collect, [])
    .option('-H, --header <line>', 'request header "Name: value" (e.g. Idempotency-Key); repeatable', collect, [])
    .option('--input <file>', 'the JSON request body from a file (- reads stdin); fields become query parameters')
    .option('--paginate', 'follow the pages (numbered pages or cursors) and print one JSON array of all items')
    .option('--jsonl', 'with --paginate: one item per line, as the pages arrive')
    .option('-i, --include', 'print the status line and response headers before the body')
    .addHelpText(
      'after',
      examples(
        ['loyalty api GET /tags', 'list the tags (JSON; pretty on a terminal, compact in a pipe)'],
        ["loyalty api GET /tags --jq '.data[].tag'", 'the tag names, one per line (--jq: a jq filter, as gh has)'],
        ['loyalty api POST /tags -f tag=VIP -f brand_id=brand-acme', 'create a tag (with an Idempotency-Key)'],
        ['loyalty api GET /members/3c9e5b0a-… -f brand_id=brand-acme', 'a member; GET fields are the query'],
        [
          'loyalty api POST /members/list -f brand_id=brand-acme -F per_page=1000 --paginate --jsonl',
          'every member of a brand, one per line',
        ],
        ['loyalty api POST /members/uuid -f brand_id=brand-acme -f "emails[]=ann@example.com"', 'a list field'],
        ['loyalty api PUT /bulk/members --input updates.json', 'a request body from a file'],
      ),
    )
    .addHelpText(
      'after',
      '\nFields go into the JSON body of operations that have one, into the query string of the others.\n' +
        'An error answer is printed to stderr as the API sent it; the exit code is 1 (4 for auth errors, 2 for\n' +
        'an unknown operation, which lists the closest ones).\n' +
        'Secret-named fields (client_secret, password, token, …) are read from a file or stdin, never typed:\n' +
        '-F client_secret=@secret.txt or -F client_secret=@-. A path with backslashes, controls, encoded\n' +
        'slashes or dots, or one that resolves to another path than written, is refused (exit 2).\n',
    )
    .action(async (method: string, path: string, options: ApiCommandOptions, command: Command) => {
      await (await import('../services/api/api-command.js')).apiCommand(
        await contextOf(command),
        method,
        path,
        options,
      );
    });
}
