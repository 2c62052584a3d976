// `--jq <expr>`: the JSON a command prints, filtered through jq as `gh --jq` does (jq -r -c: one
// result per line, strings raw). jq itself runs, compiled to WebAssembly (the jq-web package,
// jq 1.7.1, its .wasm shipped in the package): real jq semantics and messages, nothing fetched at
// run time. It is loaded only when --jq is given (about 90 ms), so no other run pays for it.
import { createRequire } from 'node:module';
import { CliError, usageError } from './errors.js';

/** Filters one JSON value: the text to print, each result on a line of its own ('' for none). */
export interface JqFilter {
  (value: unknown): string;
  /** The same as filtering each value in turn, in one run of jq (JSON Lines in batches). */
  each(values: readonly unknown[]): string;
}

interface JqModule {
  raw(input: string, filter: string, flags?: string[]): string | undefined;
}

/** jq's exit status for a program that does not compile. */
const COMPILE_ERROR = 3;

let loaded: Promise<JqModule> | undefined;
const jqModule = (): Promise<JqModule> => {
  loaded ??= createRequire(import.meta.url)('jq-web') as Promise<JqModule>;
  return loaded;
};

/** `jq: error: <what> at <top-level>, line N:\n<that line><as many spaces as the column offset>`. */
const COMPILE_MESSAGE = /jq: error: (.*?)(?: \(Unix shell quoting issues\?\))? at <top-level>, line (\d+):\n(.*)/;

/**
 * The usage error for a jq program that does not compile, naming the line and column. jq 1.7.1
 * writes the offending line followed by one space per character before the error (where it meant
 * to draw a caret), so the column is read from that padding against the line as written.
 */
export function compileError(expression: string, stderr: string): CliError {
  const match = COMPILE_MESSAGE.exec(stderr);
  if (!match) return usageError(`--jq: ${stderr.replace(/^jq: error: /, '').split('\n')[0]}`, JQ_HINT);
  const [, what = '', lineText = '1', shown = ''] = match;
  const line = Number(lineText);
  const source = expression.split('\n')[line - 1] ?? '';
  const offset = shown.startsWith(source) ? shown.length - source.length : 0;
  const where = expression.includes('\n') ? `line ${line}, column ${offset + 1}` : `column ${offset + 1}`;
  return usageError(`--jq: ${what} at ${where}:\n    ${source}\n    ${' '.repeat(offset)}^`, JQ_HINT);
}

const JQ_HINT = 'The language is jq 1.7: https://jqlang.org/manual/v1.7/';

/** What jq said on stderr, from the error jq-web throws ("Non-zero exit code: N\n<stderr>"). */
const stderrOf = (error: unknown): string =>
  error instanceof Error ? error.message.replace(/^Non-zero exit code: \d+\n?/, '').trim() : String(error);
const exitCodeOf = (error: unknown): number | undefined =>
  typeof error === 'object' && error !== null && 'exitCode' in error && typeof error.exitCode === 'number'
    ? error.exitCode
    : undefined;

/**
 * Loads jq and checks that `expression` compiles (by running it on `null`; only a compile error
 * counts there), so a mistake is a usage error before any request is sent. The filter it returns
 * throws a CliError (exit 1) for a runtime error, e.g. `keys` of a string.
 */
export async function loadJqFilter(expression: string): Promise<JqFilter> {
  const jq = await jqModule();
  const run = (input: string, program = expression): string => {
    // jq-web's Emscripten runtime sets process.exitCode to jq's status: keep the CLI's own.
    const exitCode = process.exitCode;
    try {
      // jq-web drops the last newline of jq's output (undefined: no output at all).
      const text = jq.raw(input, program, ['-r', '-c']);
      return text === undefined ? '' : `${text}\n`;
    } finally {
      process.exitCode = exitCode;
    }
  };
  try {
    run('null');
  } catch (error) {
    if (exitCodeOf(error) === COMPILE_ERROR) throw compileError(expression, stderrOf(error));
  }
  const filter = (value: unknown, program = expression): string => {
    try {
      return run(JSON.stringify(value) ?? 'null', program);
    } catch (error) {
      throw new CliError(`--jq: ${stderrOf(error).replace(/^jq: error \(at [^)]*\): /, '')}`, { cause: error });
    }
  };
  // On its own lines, so a `# comment` at the end of the expression does not swallow the `)`.
  const each = `.[] | (\n${expression}\n)`;
  return Object.assign((value: unknown) => filter(value), {
    each: (values: readonly unknown[]) => (values.length === 0 ? '' : filter(values, each)),
  });
}
