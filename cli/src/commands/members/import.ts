import { Command, Option } from 'commander';
import { contextOf } from '../../context.js';
import { examples, speedHelp } from '../../help.js';
import type { ImportOptions } from '../../services/members/import.js';
import { collect, noProgressOption } from '../options.js';

export function membersImportCommand(): Command {
  return new Command('import')
    .description('Import members from CSV or JSON Lines through sign-up batches; resumable, with a rejects file')
    .argument('<file>', 'UTF-8 CSV with a header row (a BOM and CRLF line ends are fine), or JSON Lines; - reads stdin')
    .addOption(
      new Option('--format <format>', 'input format (default: from the extension; stdin is sniffed)').choices([
        'csv',
        'jsonl',
      ]),
    )
    .option(
      '--delimiter <char>',
      'CSV column separator: one character, or tab, comma, semicolon, pipe (default: detected from the header line: , ; or tab)',
    )
    .option(
      '--map <field=column>',
      'read a field from a column: email, first_name, last_name, name (full name), unsubscribed (yes = opted out), subscribed (yes = opted in), subscribed_at; repeatable',
      collect,
      [],
    )
    .option(
      '--skip-column <column>',
      'do not read this column, also when it looks like consent (opt-out, opt-in); repeatable',
      collect,
      [],
    )
    .option(
      '--update',
      'also update existing members whose first or last name in the file differs (PUT /bulk/members, in batches)',
    )
    .option(
      '--dry-run',
      'validate every row, write the rejects file, send nothing (with --update: count created, updated, unchanged)',
    )
    .option(
      '--resume',
      'continue an interrupted import of the same file where it stopped (with the same --map and --skip-column)',
    )
    .option('--restart', 'ignore the checkpoint of an interrupted import and start over')
    .option('--rejects <path>', 'where to write rejected rows (default: <file>.rejects.csv beside the input)')
    .option('--checkpoint <path>', 'checkpoint file (default: under $XDG_CONFIG_HOME/loyalty/imports)')
    .option('--batch-size <n>', 'users per request, at most 2000', '2000')
    .option('--concurrency <n>', 'batches in flight (paced by the rate limit; 1 to 8)', '3')
    .addOption(noProgressOption())
    .addHelpText(
      'after',
      examples(
        [
          'loyalty members import members.csv --brand brand-acme',
          'import a CSV (columns email, first_name, last_name, unsubscribed, subscribed_at)',
        ],
        ['loyalty members import members.csv --dry-run', 'check a file without sending anything'],
        [
          'loyalty members import members.csv --update --dry-run',
          'how many members would be created, updated and left unchanged',
        ],
        ['loyalty members import members.csv --update', 'import, and update the names of existing members'],
        [
          'loyalty members import export.txt --delimiter tab',
          'a tab-separated file (",", ";" and tab are detected; --delimiter for others)',
        ],
        ['loyalty members import members.csv --resume', 'continue after Ctrl-C or a crash; nothing is created twice'],
        ['loyalty members import members.rejects.csv', 're-import the fixed rejected rows'],
        [
          'crm-export | loyalty members import - --format jsonl --map email=mail',
          'read JSON Lines from a pipe with another e-mail key',
        ],
      ),
    )
    .addHelpText(
      'after',
      '\nColumns that map to no member field are listed once as not imported, and kept in the rejects file.\n' +
        'A file that cannot be read (broken quoting, binary, not UTF-8) is refused with file:line:column and what to fix.\n' +
        '--update changes first_name and last_name of members already in the brand (an empty cell leaves the name as it\n' +
        "is); their subscription state is not changed. It reads the brand's member list first (one request per 1,000 members).\n" +
        speedHelp('rows') +
        '\nThe file is read twice: first to check every row (rejects are written then; about 5 s for a million rows),\n' +
        'then to send it. stdin is copied to a private temporary file for the second reading, removed at the end.\n' +
        "--update holds the brand's members in memory (about 200 bytes each).\n" +
        '\nExit codes: 0 all rows imported; 1 the API failed or cannot be reached (nothing sent: run it again; some\n' +
        'batches sent: --resume); 2 usage error: a file that is missing or cannot be read (a directory, broken quoting,\n' +
        'binary, not UTF-8), or a consent column that is not read; 3 some rows rejected (see the rejects file);\n' +
        '4 credentials refused; 130 interrupted.\n',
    )
    .action(async (file: string, options: ImportOptions, command: Command) => {
      await (await import('../../services/members/import.js')).importMembers(await contextOf(command), file, options);
    });
}
