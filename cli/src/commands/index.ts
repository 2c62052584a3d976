// The command tree in commander, built from its description in tree.ts: the `loyalty` root and
// its top-level commands. A run builds only the top-level commands its arguments name (their
// modules and subcommands are imported then); the others stay stubs that carry what the root's
// --help lists about them: name, arguments, whether it has options, and description. Importing
// all ~60 command modules was most of `loyalty --help`'s start-up (issue 17). index.test.ts
// checks every stub against its command.
import { Command, Option } from 'commander';
import { styleHelp } from './help-style.js';
import { refusedSecretOption } from '../secrets.js';
import { CLI_VERSION } from '../version.js';
import {
  ROOT_DESCRIPTION,
  ROOT_HELP_AFTER,
  ROOT_OPTIONS,
  TOP_LEVEL_COMMANDS,
  type TopLevelCommand,
  VERSION_OPTION,
} from './tree.js';

/** The root command with its global options and help text, without subcommands. */
export function rootCommand(): Command {
  const root = new Command('loyalty')
    .description(ROOT_DESCRIPTION)
    .version(CLI_VERSION, VERSION_OPTION.flags, VERSION_OPTION.description);
  for (const { flags, description, refusedSecret } of ROOT_OPTIONS) {
    if (refusedSecret)
      root.addOption(refusedSecretOption(flags as `--${string}`, refusedSecret.what, refusedSecret.alternatives));
    else root.option(flags, description);
  }
  for (const text of ROOT_HELP_AFTER) root.addHelpText('after', text);
  return root;
}

/** What the root's --help needs of a command; never run (a command named on the line is loaded). */
export function stubCommand(entry: TopLevelCommand): Command {
  const stub = new Command(entry.name).description(entry.description);
  for (const arg of entry.args ?? []) stub.argument(arg);
  if (entry.options) stub.addOption(new Option('--options').hideHelp());
  if (entry.group) stub.helpGroup(entry.group);
  return stub;
}

/**
 * The program for a run on `argv`: the top-level commands that any argument names are built,
 * the others are stubs. `__complete` walks the whole tree, so it loads every command.
 */
export async function loadProgram(argv: readonly string[]): Promise<Command> {
  const named = new Set(argv);
  const all = named.has('__complete');
  const program = rootCommand();
  const commands = await Promise.all(
    TOP_LEVEL_COMMANDS.map((entry) => (all || named.has(entry.name) ? entry.load() : stubCommand(entry))),
  );
  for (const [i, command] of commands.entries()) {
    program.addCommand(command, TOP_LEVEL_COMMANDS[i]?.hidden ? { hidden: true } : {});
  }
  return styleHelp(program);
}
