// `loyalty --help` from the tree's description (tree.ts) alone, laid out as commander lays it out
// (its Help.formatHelp: terms padded to the longest, descriptions wrapped to the terminal's width),
// so the root's help needs no command framework at start-up. root-help.test.ts checks it against
// commander's own output at many widths.
import {
  HELP_COMMAND,
  HELP_OPTION,
  ROOT_DESCRIPTION,
  ROOT_HELP_AFTER,
  ROOT_OPTIONS,
  TOP_LEVEL_COMMANDS,
  VERSION_OPTION,
} from './tree.js';

/** Commander leaves text unwrapped in a column narrower than this. */
const MIN_WIDTH_TO_WRAP = 40;
const INDENT = '  ';
const SPACER = '  ';

/** Breaks `text` at spaces into lines of at most `width` (a longer word stays whole). */
function wrap(text: string, width: number): string {
  if (width < MIN_WIDTH_TO_WRAP) return text;
  const lines: string[] = [];
  for (const line of text.split(/\r\n|\n/)) {
    const chunks = line.match(/\s*\S+/g);
    if (chunks === null) {
      lines.push('');
      continue;
    }
    let current = chunks[0] ?? '';
    for (const chunk of chunks.slice(1)) {
      if (current.length + chunk.length <= width) {
        current += chunk;
        continue;
      }
      lines.push(current);
      current = chunk.trimStart();
    }
    lines.push(current);
  }
  return lines.join('\n');
}

function item(term: string, termWidth: number, description: string, helpWidth: number): string {
  if (!description) return INDENT + term;
  const remaining = helpWidth - termWidth - SPACER.length - INDENT.length;
  const preformatted = /\n[^\S\r\n]/.test(description);
  const text =
    remaining < MIN_WIDTH_TO_WRAP || preformatted
      ? description
      : wrap(description, remaining).replace(/\n/g, `\n${' '.repeat(termWidth + SPACER.length)}`);
  return `${INDENT}${term.padEnd(termWidth)}${SPACER}${text.replace(/\n/g, `\n${INDENT}`)}`;
}

/** The root's help as `loyalty --help` prints it to a terminal `columns` wide (80 when not a terminal). */
export function rootHelp(columns?: number): string {
  const helpWidth = columns ?? 80;
  const options: Array<[string, string]> = [
    [VERSION_OPTION.flags, VERSION_OPTION.description],
    ...ROOT_OPTIONS.filter((option) => !option.refusedSecret).map((o): [string, string] => [o.flags, o.description]),
    [HELP_OPTION.flags, HELP_OPTION.description],
  ];
  const groups = new Map<string, Array<[string, string]>>();
  for (const entry of TOP_LEVEL_COMMANDS) {
    const group = groups.get(entry.group ?? 'Commands:') ?? [];
    groups.set(entry.group ?? 'Commands:', group);
    if (entry.hidden) continue;
    const term = [entry.name, ...(entry.options ? ['[options]'] : []), ...(entry.args ?? [])].join(' ');
    group.push([term, entry.description]);
  }
  groups.get('Commands:')?.push([HELP_COMMAND.name, HELP_COMMAND.description]);
  const termWidth = Math.max(...[...options, ...[...groups.values()].flat()].map(([term]) => term.length));
  const list = (heading: string, items: Array<[string, string]>): string[] =>
    items.length === 0 ? [] : [heading, ...items.map(([term, text]) => item(term, termWidth, text, helpWidth)), ''];
  const lines = [
    'Usage: loyalty [options] [command]',
    '',
    wrap(ROOT_DESCRIPTION, helpWidth),
    '',
    ...list('Options:', options),
    ...[...groups].flatMap(([heading, items]) => list(heading, items)),
  ];
  return lines.join('\n') + ROOT_HELP_AFTER.map((text) => `${text}\n`).join('');
}
