import { Command, Option } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { PointsImportOptions } from '../../services/points/import.js';
import { collect, noProgressOption } from '../options.js';

export function pointsImportCommand(): Command {
  return new Command('import')
    .description(
      "Import storecard points balances (a migration from another provider): credit them, or set each member's balance",
    )
    .argument(
      '<file>',
      'CSV with a header row, or JSON Lines: a member (email, or member_id/uuid), storecard (or --storecard) and points; - reads stdin',
    )
    .addOption(
      new Option('--add', "credit each row's points (the default; negative points are spent)").conflicts('set'),
    )
    .addOption(
      new Option(
        '--set',
        "make each member's balance exactly the row's points (sends the earn or spend that reaches it)",
      ),
    )
    .option('--storecard <id>', 'the storecard of rows that have no storecard column or an empty cell')
    .addOption(new Option('--format <format>', 'input format (default: from the extension)').choices(['csv', 'jsonl']))
    .option('--delimiter <char>', 'CSV column separator (default: detected from the header line)')
    .option(
      '--map <field=column>',
      'read a field from a column whose name is not recognised: member (an e-mail or a member UUID), storecard, points; repeatable',
      collect,
      [],
    )
    .option('--dry-run', 'check every row, read the live balances, print the plan and the rejects file; send nothing')
    .option(
      '--resume',
      'continue an interrupted import of the same file where it stopped (with the same --map and --storecard)',
    )
    .option('--restart', 'ignore the checkpoint of an interrupted import and start over')
    .option('--rejects <path>', 'where to write rejected rows (default: <file>.rejects.csv beside the input)')
    .option('--checkpoint <path>', 'checkpoint file (default: under $XDG_CONFIG_HOME/loyalty/imports)')
    .option('--concurrency <n>', 'rows in flight (paced by the rate limit; 1 to 32)', '8')
    .addOption(noProgressOption())
    .addHelpText(
      'after',
      examples(
        ['loyalty points import balances.csv --storecard card-points --dry-run', 'the plan, nothing sent'],
        ['loyalty points import balances.csv --storecard card-points', "credit each row's points"],
        ['loyalty points import balances.csv --set', "set each member's balance (columns email, storecard, points)"],
        ['loyalty points import balances.csv --set --resume', 'continue after Ctrl-C; nothing is credited twice'],
        ['loyalty points import balances.rejects.csv --set', 're-import the fixed rejected rows'],
        [
          'loyalty points import export.csv --set --map member=Kundennummer --map points=Punktestand --storecard card-points',
          'columns named otherwise',
        ],
      ),
    )
    .addHelpText(
      'after',
      '\nColumns (by header name): the member in email, member, member_id, uuid or identifier (an e-mail address or a\n' +
        'member UUID of the brand); storecard or storecard_id (or --storecard); points or balance (a whole number);\n' +
        'any other name with --map member=<column>, --map storecard=<column> or --map points=<column>.\n' +
        'A member without a pass of the storecard is issued one (counted as created). --add: negative points are spent\n' +
        '(a row that would take the balance below zero is rejected by the API). --set: the target must be 0 or more; a\n' +
        'balance already at the target is unchanged and nothing is sent; two rows for one member and storecard are refused.\n' +
        "\nEvery scan carries a transaction_reference derived from the file's content and the row (and, with --set, the\n" +
        'balance it starts from), so a rerun or a resumed run never credits a row twice. The plan (created, adjusted,\n' +
        'unchanged, rejected) is printed before anything is sent. --set reads one balance per member first.\n' +
        '\nHow fast: one scan per row (and one more for a member without a pass), since the API has no bulk call for\n' +
        'points; at the 600 requests a minute a token may send, that is about 5 to 10 rows a second. The CLI paces itself\n' +
        'to the limit (no 429s). The rows are held in memory (a few hundred bytes each).\n' +
        '\nExit codes: 0 every row imported; 1 the API failed or cannot be reached (run it again or --resume: nothing is\n' +
        'credited twice); 2 usage error (a missing column, an unreadable file); 3 some rows rejected (see the rejects\n' +
        'file); 4 credentials refused; 130 interrupted (progress is saved: --resume).\n',
    )
    .action(async (file: string, options: PointsImportOptions, command: Command) => {
      await (await import('../../services/points/import.js')).importPoints(await contextOf(command), file, options);
    });
}
