// Secrets never have to be typed on the command line: they come from a file, from stdin, from
// the environment, or from a hidden prompt when a person is at the terminal. A flag value is
// readable by every local user in the process list (/proc/<pid>/cmdline, `ps`) and stays in
// shell history, so a secret offered that way is refused before anything runs.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option } from 'commander';
import { CliError, InterruptedError, usageError } from './errors.js';
import type { Runtime } from './runtime.js';

const ON_ARGV = 'a flag value is visible to other users in the process list (ps) and stays in shell history';

/** Names of flags and fields whose values are secrets (`--client-secret`, `client_secret`, `api_key`, …). */
export const SECRET_NAME = /secret|token|password|passwd|api[-_]?key|credential/i;

export function secretOnArgv(flag: string, what: string, alternatives: string): CliError {
  return usageError(`${flag} does not take the ${what} as a value: ${ON_ARGV}.`, `Give it with ${alternatives}.`);
}

/**
 * An option that exists only to refuse a secret typed as its value (or a bare flag), with the
 * ways that keep it off argv. Hidden from --help; it fails while the command line is parsed,
 * before any file or stdin is read and before any request.
 */
export function refusedSecretOption(flag: `--${string}`, what: string, alternatives: string): Option {
  return new Option(`${flag} [value]`)
    .hideHelp()
    .preset('')
    .argParser((): never => {
      throw secretOnArgv(flag, what, alternatives);
    });
}

/**
 * `loyalty server --database-url`: a URL without a password passes (a passwordless role, or
 * PGPASSWORD); one with a password, in the user part or as `?password=`, is refused.
 */
export function parseDatabaseUrlFlag(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    return value; // not a URL: the server's configuration check names the problem
  }
  if (url.password !== '' || url.searchParams.has('password')) {
    throw usageError(
      `--database-url must not contain the database password: ${ON_ARGV}.`,
      'Set DATABASE_URL in the environment instead (`loyalty server` passes it on), or leave the password out of the URL and set PGPASSWORD.',
    );
  }
  return value;
}

export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The non-empty lines of a file (or stdin for `-`), trimmed. */
async function readSecretText(path: string, runtime: Runtime, flag: string): Promise<[string, ...string[]]> {
  let text: string;
  try {
    text = path === '-' ? await readStdin(runtime.stdin) : await readFile(resolve(runtime.cwd, path), 'utf8');
  } catch (error) {
    throw new CliError(
      `Cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
    );
  }
  const [first, ...rest] = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (first === undefined)
    throw usageError(path === '-' ? `${flag}: nothing was read from stdin.` : `${flag} ${path} is empty.`);
  return [first, ...rest];
}

/** The first line of a file (or stdin for `-`), trimmed: the usual shape of a token or secret file. */
export async function readSecretFile(path: string, runtime: Runtime, flag: string): Promise<string> {
  const [first] = await readSecretText(path, runtime, flag);
  return first;
}

/** Every non-empty line of a file (or stdin for `-`), trimmed: one secret per line, as during a rotation. */
export function readSecretLines(path: string, runtime: Runtime, flag: string): Promise<string[]> {
  return readSecretText(path, runtime, flag);
}

export async function readSecretStdin(runtime: Runtime, flag: string): Promise<string> {
  const secret = (await readStdin(runtime.stdin)).trim();
  if (!secret)
    throw usageError(
      `${flag}: nothing was read from stdin.`,
      `Pipe it in, e.g. \`printf %s "$SECRET" | loyalty … ${flag}\`.`,
    );
  return secret;
}

/**
 * Asks at the terminal, echoing nothing for secrets; `optional` accepts an empty answer. Without a TTY there is nobody to ask:
 * the error names the flag that provides the value instead.
 */
export async function prompt(
  runtime: Runtime,
  question: string,
  options: { secret?: boolean; flag: string; optional?: boolean },
): Promise<string> {
  if (!runtime.stdin.isTTY || !runtime.stderr.isTTY) {
    throw usageError(
      `${question.replace(/:\s*$/, '')} is needed, but there is no terminal to ask on.`,
      `Pass ${options.flag}.`,
    );
  }
  const answer = (options.secret ? await readHidden(runtime, question) : await readLine(runtime, question)).trim();
  if (!answer && !options.optional) throw usageError(`${question.replace(/:\s*$/, '')} cannot be empty.`);
  return answer;
}

async function readLine(runtime: Runtime, question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: runtime.stdin, output: runtime.stderr, terminal: true });
  try {
    return await rl.question(question, { signal: runtime.signal });
  } finally {
    rl.close();
  }
}

/** Reads a line in raw mode without echoing it; Ctrl-C (no SIGINT in raw mode) interrupts. */
function readHidden(runtime: Runtime, question: string): Promise<string> {
  const input = runtime.stdin as NodeJS.ReadStream;
  runtime.stderr.write(question);
  input.setRawMode?.(true);
  input.setEncoding('utf8');
  input.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error?: Error): void => {
      input.off('data', onData);
      input.setRawMode?.(false);
      input.pause();
      runtime.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish();
          return;
        }
        if (char === '\u0003') {
          finish(new InterruptedError());
          return;
        }
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    input.on('data', onData);
  });
}
