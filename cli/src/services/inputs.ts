// Reading lists and files the user points at, and asking before irreversible steps.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { prompt, readStdin } from '../secrets.js';

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

function cannotRead(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  return new CliError(`Cannot read ${path}${code === 'ENOENT' ? ': no such file' : `: ${code ?? (error as Error).message}`}.`, {
    hint: code === 'ENOENT' ? 'Check the path, or pass - to read from stdin.' : undefined,
  });
}

export async function readTextInput(ctx: Context, path: string): Promise<string> {
  try {
    return path === '-' ? await readStdin(ctx.runtime.stdin) : await readFile(resolve(ctx.runtime.cwd, path), 'utf8');
  } catch (error) {
    throw cannotRead(path, error);
  }
}

/** A file as chunks (stdin for `-`); a missing file fails before anything else happens. */
export async function openInput(ctx: Context, path: string): Promise<AsyncIterable<Buffer | string>> {
  if (path === '-') return ctx.runtime.stdin as AsyncIterable<Buffer | string>;
  const stream = createReadStream(resolve(ctx.runtime.cwd, path));
  await new Promise<void>((ok, fail) => {
    stream.once('open', () => ok());
    stream.once('error', (error) => fail(cannotRead(path, error)));
  });
  return stream;
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
