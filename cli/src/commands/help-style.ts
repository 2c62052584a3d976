// How every command's help reads, set once on the whole tree (the program a run builds, and
// buildProgram() for tools that walk the tree, such as the reference page generator):
// - a command shows its own options; the global ones are listed once, by `loyalty help options`,
//   and named in a one-line footer (as `gh help environment` does);
// - defaults and choices read as text: no `(default: [])`, `(default: false)` or quoted numbers;
// - a command that only groups others (`loyalty`, `loyalty members`), run bare, prints its help on
//   stdout and exits 0, like `--help` and `loyalty help <command>` (gh does the same).
import type { EventEmitter } from 'node:events';
import type { Argument, Command, HelpContext, Option } from 'commander';
import { HELP_COMMAND, HELP_OPTION } from './tree.js';
import { unknownHelpTopic } from './usage-errors.js';

export const GLOBAL_OPTIONS_FOOTER =
  'Global options such as --brand, --profile and --json: see `loyalty help options`.';

const styled = new WeakSet<Command>();

/** `(one of: a, b; default: x)`, without the defaults that say nothing (empty lists, false). */
function extras(
  item: { argChoices?: string[] | undefined; defaultValue?: unknown; defaultValueDescription?: string | undefined },
  description: string,
  showDefault: boolean,
): string {
  const info: string[] = [];
  if (item.argChoices) info.push(`one of: ${item.argChoices.join(', ')}`);
  const value = item.defaultValue;
  const meaningful =
    value !== undefined && value !== false && value !== '' && !(Array.isArray(value) && value.length === 0);
  if (showDefault && meaningful && !/\bdefault\b/.test(description)) {
    info.push(
      `default: ${item.defaultValueDescription ?? (typeof value === 'string' ? value : JSON.stringify(value))}`,
    );
  }
  if (info.length === 0) return description;
  return description ? `${description} (${info.join('; ')})` : `(${info.join('; ')})`;
}

const optionDescription = (option: Option): string =>
  extras(option, option.description ?? '', option.required || option.optional);

const argumentDescription = (argument: Argument): string => extras(argument, argument.description ?? '', true);

function visit(command: Command, each: (command: Command) => void): void {
  each(command);
  for (const child of command.commands) visit(child, each);
}

/** Applies the help style to `program` and every command under it (once each). */
export function styleHelp(program: Command): Command {
  visit(program, (command) => {
    if (styled.has(command)) return;
    styled.add(command);
    command.configureHelp({
      ...command.configureHelp(),
      showGlobalOptions: false,
      sortSubcommands: false,
      optionDescription,
      argumentDescription,
    });
    if (command.helpGroup() !== 'Help topics:') command.helpOption(HELP_OPTION.flags, HELP_OPTION.description);
    if (command.parent && command.helpGroup() !== 'Help topics:') {
      // After the examples (which end with a blank line), or straight after the command list.
      const spacer = (command as unknown as EventEmitter).listenerCount('afterHelp') === 0 ? '\n' : '';
      command.addHelpText('after', `${spacer}${GLOBAL_OPTIONS_FOOTER}`);
    }
    if (command.commands.length > 0) {
      command.helpCommand(HELP_COMMAND.name, HELP_COMMAND.description);
      // Commander calls help({ error: true }) for a bare group: help on stderr, exit 1. Asking
      // for nothing more is asking for the help: stdout and exit 0, the same as --help.
      // `loyalty help bogus` ends here too (with args): that is an unknown command.
      const help = command.help.bind(command);
      command.help = ((context?: HelpContext) => {
        if (!(context && typeof context === 'object' && context.error)) return help(context);
        const [first, second] = command.args;
        if (first !== undefined) throw unknownHelpTopic(command, (first === 'help' ? second : first) ?? first);
        return help({ error: false });
      }) as Command['help'];
    }
  });
  return program;
}
