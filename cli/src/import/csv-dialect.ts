// What real CSV files look like: Excel writes `;` where the decimal separator is a comma,
// "Text (tab delimited)" writes tabs, and it may put a `sep=;` line first. And when a file
// cannot be read, what the user has to fix, at which line and column.
import { defined } from '../defined.js';
import { usageError, type CliError } from '../errors.js';

const CANDIDATES = [',', ';', '\t'] as const;

export interface Dialect {
  delimiter: string;
  /** The file starts with Excel's `sep=<delimiter>` line, which is not the header. */
  sepLine: boolean;
}

/** Reads `--delimiter`: one character, or the words tab, comma, semicolon, pipe. */
export function parseDelimiter(value: string): string {
  const named: Record<string, string> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';', pipe: '|' };
  const delimiter = named[value.toLowerCase()] ?? value;
  if ([...delimiter].length !== 1 || /["\r\n]/.test(delimiter)) {
    throw usageError(
      `--delimiter must be one character, or tab, comma, semicolon or pipe (got ${JSON.stringify(value)}).`,
    );
  }
  return delimiter;
}

/** Picks the delimiter from the header line: the candidate that occurs most often outside quotes. */
export function detectDialect(head: string, given?: string): Dialect {
  const lines = head.replace(/^\uFEFF/, '').split('\n');
  const sep = /^sep=(.)\r?$/i.exec(lines[0] ?? '');
  if (sep) return { delimiter: given ?? defined(sep[1], 'sep= line delimiter'), sepLine: true };
  if (given) return { delimiter: given, sepLine: false };
  const header = lines[0] ?? '';
  let best: string = ',';
  let bestCount = 0;
  for (const candidate of CANDIDATES) {
    const count = countOutsideQuotes(header, candidate);
    if (count > bestCount) {
      best = candidate;
      bestCount = count;
    }
  }
  return { delimiter: best, sepLine: false };
}

function countOutsideQuotes(line: string, char: string): number {
  let count = 0;
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (c === char && !quoted) count += 1;
  }
  return count;
}

const describe = (delimiter: string): string => (delimiter === '\t' ? 'tab' : `"${delimiter}"`);

/**
 * The one-line usage error for a csv-parse failure: file:line:column and what to fix.
 * `lineText` gives the text of a line if it is still at hand; `openQuote` is where a quoted
 * field that never closed began.
 */
export function csvProblem(
  error: { code?: string; lines?: number; field?: string; message: string },
  context: {
    name: string;
    delimiter: string;
    lineText: (line: number) => string | undefined;
    openQuote?: { line: number; column: number } | undefined;
  },
): CliError {
  const { name, delimiter } = context;
  const doubling = 'double every " inside a field ("like ""this"""), and quote the whole field';
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
    const at = context.openQuote ? `${context.openQuote.line}:${context.openQuote.column}` : `${error.lines ?? '?'}`;
    return usageError(`${name}:${at}: this quoted field is never closed. Add the closing ", or ${doubling}.`);
  }
  const line = error.lines ?? 0;
  const column = locateQuoteProblem(context.lineText(line), delimiter);
  const at = column === undefined ? `${name}:${line}` : `${name}:${line}:${column}`;
  if (error.code === 'INVALID_OPENING_QUOTE') {
    return usageError(
      `${at}: a " inside a field that does not start with one. ${capitalize(doubling)}; columns are separated by ${describe(delimiter)} (--delimiter to change).`,
    );
  }
  if (error.code === 'CSV_INVALID_CLOSING_QUOTE' || error.code === 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE') {
    return usageError(
      `${at}: text after the closing " of a field. ${capitalize(doubling)}; columns are separated by ${describe(delimiter)} (--delimiter to change).`,
    );
  }
  return usageError(`${at}: the CSV cannot be read (${error.message.replace(/\.$/, '')}).`);
}

const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Column (1-based, in characters) of the first quote problem on a line that starts a record:
 * a `"` inside an unquoted field, or a character after a closing `"` that is not a delimiter.
 */
export function locateQuoteProblem(line: string | undefined, delimiter: string): number | undefined {
  if (line === undefined) return undefined;
  const chars = [...line];
  let i = 0;
  while (i < chars.length) {
    if (chars[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= chars.length) return undefined; // the field goes on past this line
        if (chars[i] === '"' && chars[i + 1] === '"') i += 2;
        else if (chars[i] === '"') break;
        else i += 1;
      }
      i += 1;
      if (i < chars.length && chars[i] !== delimiter) return i + 1;
      i += 1;
    } else {
      while (i < chars.length && chars[i] !== delimiter) {
        if (chars[i] === '"') return i + 1;
        i += 1;
      }
      i += 1;
    }
  }
  return undefined;
}
