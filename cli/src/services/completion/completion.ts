// What the shell offers at the cursor, worked out from the commander tree itself: commands,
// subcommands and long flags come from their definitions, so a new command completes with no
// change here. Only values that commander cannot know (event types, profile names, setting keys)
// have a provider below. Loaded by `loyalty __complete` on every Tab: no SDK, no network, no ink.
import { join } from 'node:path';
import type { Argument, Command, Option } from 'commander';
import { configDir, readConfigFile, SETTING_KEYS } from '../../settings.js';
import { EVENT_TYPES } from '../../domain.js';
import { API_METHODS, operationPaths } from '../api/api-command-operations.js';
import { TRIGGER_TYPES } from '../trigger/recipes.js';

export interface Candidate {
  value: string;
  description?: string;
}

/** What the shell does besides offering the candidates: nothing else, or complete paths. */
export type Fallback = 'none' | 'files' | 'dirs';

export interface Completion {
  candidates: Candidate[];
  fallback: Fallback;
}

/**
 * The protocol line that ends `loyalty __complete` output, after one candidate per line
 * (`value<TAB>description`). The numbers are cobra's ShellCompDirective bits, so the scripts
 * read like those of `gh`, `kubectl` and other cobra CLIs: 4 no file completion, 0 default
 * (files), 16 directories only.
 */
const DIRECTIVE: Record<Fallback, number> = { none: 4, files: 0, dirs: 16 };

type Values = (env: NodeJS.ProcessEnv) => Promise<readonly string[]> | readonly string[];

/** Options whose values commander does not know, by long flag. `list`: comma-separated. */
const OPTION_VALUES: Record<string, { values: Values; list?: boolean }> = {
  '--events': { values: () => EVENT_TYPES, list: true },
  '--profile': { values: (env) => profileNames(env) },
};

/** Arguments whose values commander does not know, by command path and argument name. */
const ARGUMENT_VALUES: Record<string, Values> = {
  'trigger <event-type>': () => TRIGGER_TYPES,
  'config get <key>': () => SETTING_KEYS,
  'config set <key>': () => SETTING_KEYS,
  'config unset <key>': () => SETTING_KEYS,
  'api <method>': () => API_METHODS,
  'api <path>': () => operationPaths(),
};

/** Profile names of the config file; none when it is missing or unreadable (never an error). */
async function profileNames(env: NodeJS.ProcessEnv): Promise<string[]> {
  try {
    const { profiles } = await readConfigFile(join(configDir(env), 'config.json'));
    return typeof profiles === 'object' && !Array.isArray(profiles) ? Object.keys(profiles).sort() : [];
  } catch {
    return [];
  }
}

/**
 * A value placeholder named file, path or dir (`-f, --file <path>`, `<file>`, `--data-dir <dir>`,
 * `--headers-file <path>`) is a path: the shell completes it from the file system.
 */
function pathKind(placeholder: string | undefined): Fallback {
  if (!placeholder) return 'none';
  if (/(^|-)(dir|directory)$/.test(placeholder)) return 'dirs';
  if (/(^|-)(file|path)$/.test(placeholder)) return 'files';
  return 'none';
}

const placeholderOf = (option: Option): string | undefined => /[<[]([^>\]]+?)(\.\.\.)?[>\]]/.exec(option.flags)?.[1];

const takesValue = (option: Option): boolean => option.required || option.optional;

/** The option `flag` names in `command` or its ancestors (their options parse anywhere too). */
function findOption(command: Command, flag: string): Option | undefined {
  for (let current: Command | null = command; current; current = current.parent) {
    const found = current.options.find((option) => option.long === flag || option.short === flag);
    if (found) return found;
  }
  return undefined;
}

/** A subcommand by name or alias; commander's implicit `help` command is listed by Help only. */
function findSubcommand(command: Command, word: string): Command | undefined {
  const all = [...command.commands, ...command.createHelp().visibleCommands(command)];
  return all.find((sub) => sub.name() === word || sub.aliases().includes(word));
}

const firstLine = (text: string): string => text.split('\n')[0] ?? '';

function pathOf(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

const isHelp = (command: Command): boolean => command.name() === 'help' && command.commands.length === 0;

function subcommandCandidates(command: Command): Candidate[] {
  const visible = command.createHelp().visibleCommands(command);
  return visible.map((sub) => ({
    value: sub.name(),
    description: isHelp(sub) ? 'show help for a command' : firstLine(sub.summary() || sub.description()),
  }));
}

/** Long flags of the command and of its ancestors, as `--help` lists them. */
function optionCandidates(command: Command): Candidate[] {
  const seen = new Set<string>();
  const candidates: Candidate[] = [];
  for (let current: Command | null = command; current; current = current.parent) {
    for (const option of current.createHelp().visibleOptions(current)) {
      if (!option.long || seen.has(option.long)) continue;
      if (current !== command && option.long === '--help') continue;
      seen.add(option.long);
      candidates.push({ value: option.long, description: firstLine(option.description) });
    }
  }
  return candidates;
}

/** Candidates for `values`; a comma-separated list completes its last item, keeping the ones before. */
function valuesOf(values: readonly string[], current: string, { prefix = '', list = false } = {}): Candidate[] {
  const head = list ? current.slice(0, current.lastIndexOf(',') + 1) : '';
  const given = new Set(head.split(','));
  return values.filter((value) => !given.has(value)).map((value) => ({ value: `${prefix}${head}${value}` }));
}

async function optionValues(option: Option, current: string, env: NodeJS.ProcessEnv, prefix = ''): Promise<Completion> {
  const provider = option.long ? OPTION_VALUES[option.long] : undefined;
  if (provider) {
    const values = await provider.values(env);
    return { candidates: valuesOf(values, current, { prefix, list: Boolean(provider.list) }), fallback: 'none' };
  }
  if (option.argChoices) return { candidates: valuesOf(option.argChoices, current, { prefix }), fallback: 'none' };
  return { candidates: [], fallback: pathKind(placeholderOf(option)) };
}

async function argumentValues(
  command: Command,
  argument: Argument | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Completion> {
  if (!argument) return { candidates: [], fallback: 'none' };
  const provider = ARGUMENT_VALUES[`${pathOf(command)} <${argument.name()}>`];
  if (provider) return { candidates: valuesOf(await provider(env), ''), fallback: 'none' };
  if (argument.argChoices) return { candidates: valuesOf(argument.argChoices, ''), fallback: 'none' };
  return { candidates: [], fallback: pathKind(argument.name()) };
}

/**
 * The completion of `words`: the arguments after the program name up to the cursor, the last one
 * being the word under the cursor ('' after a space). Only candidates that extend that word.
 */
export async function complete(
  program: Command,
  words: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Completion> {
  const current = words.at(-1) ?? '';
  const completion = await completeAt(program, words.slice(0, -1), current, env);
  const candidates = completion.candidates.filter((candidate) => candidate.value.startsWith(current));
  return { ...completion, candidates };
}

/**
 * Reads `before` the way commander parses it: the options of a command and of its ancestors
 * anywhere after it, a required value always taking the next word, an optional one only when that
 * word is not an option, no options after `--`.
 */
async function completeAt(
  program: Command,
  before: readonly string[],
  current: string,
  env: NodeJS.ProcessEnv,
): Promise<Completion> {
  let command = program;
  let helpOf: Command | undefined; // `… help <command>`: the command whose subcommands it explains
  let operands = 0;
  let literal = false;
  let pending: Option | undefined; // an option whose value is the next word
  for (const word of before) {
    if (pending) {
      const option = pending;
      pending = undefined;
      if (option.required || !word.startsWith('-')) continue;
    }
    if (literal || !word.startsWith('-') || word === '-') {
      const sub = operands === 0 && !literal ? findSubcommand(command, word) : undefined;
      if (sub && isHelp(sub) && !command.commands.includes(sub)) helpOf = command;
      if (sub) command = sub;
      else operands += 1;
      continue;
    }
    if (word === '--') {
      literal = true;
      continue;
    }
    const long = word.startsWith('--');
    const option = findOption(command, long ? (word.split('=')[0] ?? word) : word.slice(0, 2));
    const inline = long ? word.includes('=') : word.length > 2;
    if (option && takesValue(option) && !inline) pending = option;
  }

  if (pending && (pending.required || !current.startsWith('-'))) return optionValues(pending, current, env);
  if (!literal && current.startsWith('--') && current.includes('=')) {
    const flag = current.slice(0, current.indexOf('='));
    const option = findOption(command, flag);
    if (!option || !takesValue(option)) return { candidates: [], fallback: 'none' };
    return optionValues(option, current.slice(flag.length + 1), env, `${flag}=`);
  }
  if (!literal && current.startsWith('-')) return { candidates: optionCandidates(command), fallback: 'none' };
  if (helpOf && operands === 0) {
    return { candidates: subcommandCandidates(helpOf).filter((c) => c.value !== 'help'), fallback: 'none' };
  }
  if (operands === 0 && !literal && command.commands.length > 0) {
    return { candidates: subcommandCandidates(command), fallback: 'none' };
  }
  const args = command.registeredArguments;
  const last = args.at(-1);
  return argumentValues(command, args[operands] ?? (last?.variadic ? last : undefined), env);
}

/** The output of `loyalty __complete`: `value<TAB>description` lines, then `:<directive>`. */
export function formatCompletion({ candidates, fallback }: Completion): string {
  const lines = candidates.map(({ value, description }) =>
    description ? `${value}\t${description.replace(/\s+/g, ' ')}` : value,
  );
  return `${[...lines, `:${DIRECTIVE[fallback]}`].join('\n')}\n`;
}
