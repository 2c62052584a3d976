// Data goes to stdout, everything meant for the person at the terminal goes to stderr, so
// `loyalty … --json | jq` and `loyalty … > file.csv` always receive clean data. Human output
// (tables, results, messages) shows control characters from the API escaped (ui/controls.ts).
import { showControls, showControlsKeepingPaint } from './ui/controls.js';

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface OutputOptions extends Partial<OutputStreams> {
  json?: boolean;
  color?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => unknown;
}

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

export function renderTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[], paint: Palette): string {
  const cells = rows.map((row) =>
    columns.map((column) => showControls(formatCell(column.value(row))).replace(/\s+/g, ' ')),
  );
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((line) => visibleLength(line[i] ?? ''))),
  );
  const pad = (text: string, i: number): string =>
    text + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(text)));
  const line = (parts: string[]): string => parts.map(pad).join('  ').trimEnd();
  const header = paint.bold(line(columns.map((column) => column.header.toUpperCase())));
  return `${[header, ...cells.map(line)].join('\n')}\n`;
}

export class Output {
  readonly json: boolean;
  readonly stdout: OutputStreams['stdout'];
  readonly stderr: OutputStreams['stderr'];
  /** Colours for stdout (data) and stderr (messages) are decided separately. */
  readonly out: Palette;
  readonly err: Palette;

  constructor(options: OutputOptions = {}) {
    const env = options.env ?? process.env;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.json = options.json ?? false;
    this.out = palette(colorEnabled(this.stdout, env, options.color));
    this.err = palette(colorEnabled(this.stderr, env, options.color));
  }

  /** Prints a result: JSON with --json, otherwise the human rendering. */
  result(value: unknown, human: () => string): void {
    this.stdout.write(
      this.json ? `${JSON.stringify(value, null, 2)}\n` : ensureNewline(showControlsKeepingPaint(human())),
    );
  }

  /** Prints a list as a table, or as a JSON array with --json. */
  table<Row>(rows: readonly Row[], columns: readonly Column<Row>[], empty = 'Nothing to show.'): void {
    if (this.json) {
      this.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else if (rows.length === 0) {
      this.info(empty);
    } else {
      this.stdout.write(renderTable(rows, columns, this.out));
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
