// Reading lists and files the user points at, and asking before irreversible steps.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { prompt, readStdin } from '../../secrets.js';

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

function cannotRead(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EISDIR')
    return usageError(`Cannot read ${path || '""'}: it is a directory.`, 'Pass a file, or - to read from stdin.');
  const message = `Cannot read ${path}${code === 'ENOENT' ? ': no such file' : `: ${code ?? (error as Error).message}`}.`;
  // A path named on the command line that cannot be opened is a mistake in the command: exit 2.
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return usageError(message, 'Check the path, or pass - to read from stdin.');
  if (code === 'EACCES' || code === 'EPERM') return usageError(message);
  return new CliError(message);
}

export async function readTextInput(ctx: Context, path: string): Promise<string> {
  try {
    return path === '-' ? await readStdin(ctx.runtime.stdin) : await readFile(resolve(ctx.runtime.cwd, path), 'utf8');
  } catch (error) {
    throw cannotRead(path, error);
  }
}

/**
 * A file as chunks (stdin for `-`); a missing file or a directory fails before anything else
 * happens, and a read error later on is still one line that names the file.
 */
export async function openInput(ctx: Context, path: string): Promise<AsyncIterable<Buffer | string>> {
  if (path === '-') return ctx.runtime.stdin as AsyncIterable<Buffer | string>;
  const stream = createReadStream(resolve(ctx.runtime.cwd, path));
  await new Promise<void>((ok, fail) => {
    stream.once('open', () => ok());
    stream.once('error', (error) => fail(cannotRead(path, error)));
  });
  // Opening a directory succeeds on Linux; only reading it fails.
  if ((await stat(resolve(ctx.runtime.cwd, path)).catch(() => undefined))?.isDirectory()) {
    stream.destroy();
    throw cannotRead(path, Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));
  }
  return (async function* () {
    try {
      yield* stream;
    } catch (error) {
      throw cannotRead(path, error);
    }
  })();
}

/** Asks before something irreversible; without a terminal `--yes` is required. */
export async function confirm(ctx: Context, question: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!ctx.runtime.stdin.isTTY || !ctx.runtime.stderr.isTTY) {
    throw usageError(`${question} Refusing without confirmation.`, 'Pass --yes to confirm.');
  }
  const answer = await prompt(ctx.runtime, `${question} Type "yes" to continue: `, { flag: '--yes' });
  if (answer.toLowerCase() !== 'yes') throw new CliError('Cancelled.');
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
