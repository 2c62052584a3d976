// Secrets never have to be typed on the command line: they come from a file, from stdin, or
// from a hidden prompt when a person is at the terminal.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError, InterruptedError, usageError } from './errors.js';
import type { Runtime } from './runtime.js';

export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The first line of a file (or stdin for `-`), trimmed: the usual shape of a token or secret file. */
export async function readSecretFile(path: string, runtime: Runtime, flag: string): Promise<string> {
  let text: string;
  try {
    text = path === '-' ? await readStdin(runtime.stdin) : await readFile(resolve(runtime.cwd, path), 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  const secret = text.split(/\r?\n/).find((line) => line.trim() !== '')?.trim();
  if (!secret) throw usageError(`${flag} ${path} is empty.`);
  return secret;
}

export async function readSecretStdin(runtime: Runtime, flag: string): Promise<string> {
  const secret = (await readStdin(runtime.stdin)).trim();
  if (!secret) throw usageError(`${flag}: nothing was read from stdin.`, `Pipe it in, e.g. \`printf %s "$SECRET" | loyalty … ${flag}\`.`);
  return secret;
}

/**
 * Asks at the terminal, echoing nothing for secrets. Without a TTY there is nobody to ask:
 * the error names the flag that provides the value instead.
 */
export async function prompt(runtime: Runtime, question: string, options: { secret?: boolean; flag: string }): Promise<string> {
  if (!runtime.stdin.isTTY || !runtime.stderr.isTTY) {
    throw usageError(`${question.replace(/:\s*$/, '')} is needed, but there is no terminal to ask on.`, `Pass ${options.flag}.`);
  }
  const answer = (options.secret ? await readHidden(runtime, question) : await readLine(runtime, question)).trim();
  if (!answer) throw usageError(`${question.replace(/:\s*$/, '')} cannot be empty.`);
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
        if (char === '\r' || char === '\n' || char === '\u0004') return finish();
        if (char === '\u0003') return finish(new InterruptedError());
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    input.on('data', onData);
  });
}
