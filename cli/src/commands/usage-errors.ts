// Commander's parse errors (unknown option or command, missing or extra arguments, a value
// outside its choices) in the CLI's own voice: `✖ what` and `→ what to do`, exit code 2, on
// stderr, like every other error. Commander prints nothing itself (run.ts silences it); its
// message is read here and said again.
import type { Command, CommanderError } from 'commander';
import { closest, distance } from 'fastest-levenshtein';
import { type CliError, usageError } from '../errors.js';

/** `loyalty members get`: the command as typed, for messages. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Commander appends `\n(Did you mean x?)` or `\n(Did you mean one of x, y?)`. */
function splitSuggestion(message: string): { text: string; suggestion: string | undefined } {
  const match = /\n\(Did you mean (?:one of )?(.+)\?\)$/.exec(message);
  if (!match) return { text: message, suggestion: undefined };
  return { text: message.slice(0, match.index), suggestion: match[1] };
}

/** Commander's "Allowed choices are a, b." as the CLI says it. */
function choices(text: string): string {
  const match = /^Allowed choices are (.*?)\.?$/s.exec(text);
  return match ? `it must be one of ${match[1]}.` : sentence(text);
}

const sentence = (text: string): string => {
  const trimmed = text.replace(/^error: /, '').trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

/** The usage error to report for a commander error that `command` raised while parsing. */
export function usageFailure(error: CommanderError, command: Command): CliError {
  const path = commandPath(command);
  const help = `See \`${path} --help\`.`;
  const { text, suggestion } = splitSuggestion(error.message);
  const withSuggestion = (named: string | undefined): string => (named ? `Did you mean ${named}? ${help}` : help);
  let match: RegExpExecArray | null;
  switch (error.code) {
    case 'commander.unknownOption':
      match = /'(.+)'$/.exec(text);
      return usageError(`Unknown option ${match?.[1] ?? text} for \`${path}\`.`, withSuggestion(suggestion));
    case 'commander.unknownCommand': {
      match = /'(.+)'$/.exec(text);
      const names = suggestion?.split(', ').map((name) => `\`${path} ${name}\``);
      return usageError(`\`${path}\` has no command "${match?.[1] ?? text}".`, withSuggestion(names?.join(' or ')));
    }
    case 'commander.missingArgument':
      match = /'(.+)'$/.exec(text);
      return usageError(
        `\`${path}\` needs the argument <${match?.[1] ?? '?'}>.`,
        `Usage: ${path} ${command.usage()}. ${help}`,
      );
    case 'commander.excessArguments': {
      match = /Expected (\d+) arguments? but got (\d+): (.*)\.$/.exec(text);
      const expected = Number(match?.[1] ?? 0);
      const takes = expected === 0 ? 'takes no arguments' : `takes ${expected}`;
      return usageError(
        `Too many arguments: \`${path}\` ${takes}, got ${match?.[2] ?? '?'} (${match?.[3] ?? ''}).`,
        `Usage: ${path} ${command.usage()}. Quote a value that holds spaces. ${help}`,
      );
    }
    case 'commander.invalidArgument': {
      match = /^error: command-argument value '(.*)' is invalid for argument '(.+?)'\. (.*)$/s.exec(text);
      if (match) return usageError(`"${match[1]}" is not a valid <${match[2]}>: ${choices(match[3] ?? '')}`, help);
      match = /^error: option '(.+?)' argument '(.*)' is invalid\. (.*)$/s.exec(text);
      if (match) {
        const flag = /--[\w-]+/.exec(match[1] ?? '')?.[0] ?? match[1];
        return usageError(`${flag} does not take "${match[2]}": ${choices(match[3] ?? '')}`, help);
      }
      return usageError(sentence(text), help);
    }
    case 'commander.missingMandatoryOptionValue':
      match = /option '(.+)' not specified/.exec(text);
      return usageError(`\`${path}\` needs ${match?.[1] ?? 'an option'}.`, help);
    case 'commander.optionMissingArgument':
      match = /option '(.+)' argument missing/.exec(text);
      return usageError(`${/--[\w-]+/.exec(match?.[1] ?? '')?.[0] ?? 'The option'} needs a value.`, help);
    default:
      return usageError(sentence(text), withSuggestion(suggestion));
  }
}

/** `loyalty help bogus`: the name given to help is not a command of `command`. */
export function unknownHelpTopic(command: Command, name: string): CliError {
  const path = commandPath(command);
  const names = command
    .createHelp()
    .visibleCommands(command)
    .map((c) => c.name());
  const best = names.length ? closest(name, names) : undefined;
  const guess = best && distance(name, best) <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
  return usageError(
    `\`${path}\` has no command "${name}".`,
    `${guess ? `Did you mean \`${path} help ${guess}\`? ` : ''}See \`${path} --help\`.`,
  );
}
