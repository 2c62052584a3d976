// Data goes to stdout, everything meant for the person at the terminal goes to stderr, so
// `loyalty … --json | jq` and `loyalty … > file.csv` always receive clean data. Human output
// (tables, results, messages) shows control characters from the API escaped (ui/controls.ts).
// With --jq, every JSON value printed passes through the filter instead (jq.ts).
import type { JqFilter } from './jq.js';
import { showControls, showControlsKeepingPaint } from './ui/controls.js';

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface OutputOptions extends Partial<OutputStreams> {
  json?: boolean;
  /** `--jq`: print each JSON value through this filter (implies `json`). */
  jq?: JqFilter | undefined;
  color?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => unknown;
  /**
   * Free text (a name, a URL, a summary) that may be cut with "…" for the table to fit the
   * terminal. Identifiers, codes and times are never cut: they are copied.
   */
  shrink?: boolean;
  /** Left out (the rightmost first) when the table cannot fit otherwise; --json always has it. */
  optional?: boolean;
}

/** A shrinkable column is not cut below this (or its header, if longer). */
const MIN_SHRUNK = 12;

export type Paint = (text: string) => string;
export interface Palette {
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

const ansi =
  (open: number, close: number): Paint =>
  (text) =>
    `\u001b[${open}m${text}\u001b[${close}m`;
const plain: Paint = (text) => text;

export function palette(enabled: boolean): Palette {
  if (!enabled) return { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  return {
    bold: ansi(1, 22),
    dim: ansi(2, 22),
    red: ansi(31, 39),
    green: ansi(32, 39),
    yellow: ansi(33, 39),
    cyan: ansi(36, 39),
  };
}

/** https://no-color.org: a non-empty NO_COLOR wins; FORCE_COLOR turns colour on without a TTY. */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv, flag?: boolean): boolean {
  if (flag === false) return false;
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  if (env.TERM === 'dumb') return false;
  return Boolean(stream.isTTY);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches ANSI escape sequences, which start with the ESC control character
const ANSI_PATTERN = /\u001b\[[0-9;]*m/g;
export const visibleLength = (text: string): number => text.replace(ANSI_PATTERN, '').length;

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.map(formatCell).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `text` cut to `width` visible characters, ending in "…" when cut. Cells have no paint here. */
function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/**
 * The column widths for a table no wider than `maxWidth`: the widest shrinkable column gives way
 * first, one character at a time, down to its minimum. Other columns keep their width; undefined
 * when the table cannot fit that way.
 */
function fitWidths(natural: number[], min: number[], maxWidth: number): number[] | undefined {
  const widths = [...natural];
  let total = widths.reduce((sum, width) => sum + width, 2 * (widths.length - 1));
  while (total > maxWidth) {
    let widest = -1;
    for (const [i, width] of widths.entries()) {
      if (width > (min[i] ?? 0) && (widest === -1 || width > (widths[widest] ?? 0))) widest = i;
    }
    if (widest === -1) return undefined;
    widths[widest] = (widths[widest] ?? 0) - 1;
    total -= 1;
  }
  return widths;
}

/**
 * The columns to show and their widths: optional columns go, the rightmost first, until the rest
 * fit. A table of identifiers that still does not fit is shrunk as far as it goes, and the
 * terminal wraps the rest.
 */
function layout<Row>(
  natural: number[],
  columns: readonly Column<Row>[],
  maxWidth: number | undefined,
): { shown: number[]; widths: number[] } {
  let shown = columns.map((_, i) => i);
  if (maxWidth === undefined) return { shown, widths: natural };
  const min = columns.map((column, i) =>
    column.shrink ? Math.min(natural[i] ?? 0, Math.max(MIN_SHRUNK, column.header.length)) : (natural[i] ?? 0),
  );
  for (;;) {
    const pick = (values: number[]): number[] => shown.map((i) => values[i] ?? 0);
    const widths = fitWidths(pick(natural), pick(min), maxWidth);
    if (widths) return { shown, widths };
    const drop = shown.findLast((i) => columns[i]?.optional);
    if (drop === undefined) return { shown, widths: pick(min) };
    shown = shown.filter((i) => i !== drop);
  }
}

export function renderTable<Row>(
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  paint: Palette,
  maxWidth?: number,
): string {
  const cells = rows.map((row) =>
    columns.map((column) => showControls(formatCell(column.value(row))).replace(/\s+/g, ' ')),
  );
  const natural = columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((line) => visibleLength(line[i] ?? ''))),
  );
  const { shown, widths } = layout(natural, columns, maxWidth);
  const fit = (line: string[]): string[] =>
    shown.map((i, j) => {
      const text = line[i] ?? '';
      return columns[i]?.shrink ? cut(text, widths[j] ?? text.length) : text;
    });
  const pad = (text: string, j: number): string =>
    text + ' '.repeat(Math.max(0, (widths[j] ?? 0) - visibleLength(text)));
  const line = (parts: string[]): string => parts.map(pad).join('  ').trimEnd();
  const header = paint.bold(line(fit(columns.map((column) => column.header.toUpperCase()))));
  return `${[header, ...cells.map((cellLine) => line(fit(cellLine)))].join('\n')}\n`;
}

/**
 * How wide tables may be: the terminal's width when stdout is one, else COLUMNS when set; with
 * neither (a pipe, a file) tables keep every character, for the program that reads them.
 */
export function tableWidth(stdout: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv): number | undefined {
  if (stdout.isTTY && typeof stdout.columns === 'number' && stdout.columns > 0) return stdout.columns;
  const columns = Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : undefined;
}

export class Output {
  readonly json: boolean;
  readonly #jq: JqFilter | undefined;
  readonly stdout: OutputStreams['stdout'];
  readonly stderr: OutputStreams['stderr'];
  /** Colours for stdout (data) and stderr (messages) are decided separately. */
  readonly out: Palette;
  readonly err: Palette;
  /** The width tables fit in, if any (tableWidth). */
  readonly width: number | undefined;

  constructor(options: OutputOptions = {}) {
    const env = options.env ?? process.env;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.#jq = options.jq;
    this.json = (options.json ?? false) || options.jq !== undefined;
    this.out = palette(colorEnabled(this.stdout, env, options.color));
    this.err = palette(colorEnabled(this.stderr, env, options.color));
    this.width = tableWidth(this.stdout, env);
  }

  /** The flag that made the output JSON, as messages name it: `--jq` or `--json`. */
  get jsonFlag(): '--jq' | '--json' {
    return this.#jq ? '--jq' : '--json';
  }

  /**
   * The text of a JSON value, newline included: pretty (2 spaces) or one line; with --jq, the
   * filter's results instead, one per line (none: ''). The one door every JSON output goes through.
   */
  jsonText(value: unknown, pretty: boolean): string {
    if (this.#jq) return this.#jq(value);
    return `${pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value)}\n`;
  }

  /** `jsonText(value, false)` of each value, joined (one run of jq with --jq). */
  jsonLinesText(values: readonly unknown[]): string {
    if (this.#jq) return this.#jq.each(values);
    let text = '';
    for (const value of values) text += `${JSON.stringify(value)}\n`;
    return text;
  }

  /** Prints a JSON value on one line (JSON Lines: a stream's events, a page's items). */
  jsonLine(value: unknown): void {
    this.stdout.write(this.jsonText(value, false));
  }

  /** Prints a result: JSON with --json, otherwise the human rendering. */
  result(value: unknown, human: () => string): void {
    this.stdout.write(this.json ? this.jsonText(value, true) : ensureNewline(showControlsKeepingPaint(human())));
  }

  /** Prints a list as a table, or as a JSON array with --json. */
  table<Row>(rows: readonly Row[], columns: readonly Column<Row>[], empty = 'Nothing to show.'): void {
    if (this.json) {
      this.stdout.write(this.jsonText(rows, true));
    } else if (rows.length === 0) {
      this.info(empty);
    } else {
      this.stdout.write(renderTable(rows, columns, this.out, this.width));
    }
  }

  /** Raw data line (already formatted), e.g. a secret for scripts. */
  write(text: string): void {
    this.stdout.write(ensureNewline(text));
  }

  info(message: string): void {
    this.stderr.write(ensureNewline(showControlsKeepingPaint(message)));
  }

  success(message: string): void {
    this.stderr.write(ensureNewline(`${this.err.green('✔')} ${showControlsKeepingPaint(message)}`));
  }

  warn(message: string): void {
    this.stderr.write(ensureNewline(`${this.err.yellow('!')} ${showControlsKeepingPaint(message)}`));
  }

  error(message: string): void {
    this.stderr.write(ensureNewline(`${this.err.red('✖')} ${showControlsKeepingPaint(message)}`));
  }
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
