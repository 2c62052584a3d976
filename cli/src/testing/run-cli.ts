// Runs the whole program in-process for tests: captured stdout/stderr, a temporary config
// directory, an optional stdin and Ctrl-C signal. HTTP is intercepted by msw in the tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { onTestFinished } from 'vitest';
import { run } from '../main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  stdin?: string | Buffer;
  cwd?: string;
  signal?: AbortSignal;
  tty?: boolean;
  /** The terminal's width, as stdout.columns of a TTY (with `tty`). */
  columns?: number;
}

/** A fresh temporary directory, removed when the current test ends. */
export async function tempConfigHome(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loyalty-cli-test-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function capture(
  tty: boolean,
  columns?: number,
): { stream: PassThrough & { isTTY?: boolean; columns?: number }; text: () => string } {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  stream.isTTY = tty;
  if (columns !== undefined) stream.columns = columns;
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { stream, text: () => text };
}

export async function runCli(args: string[], options: RunOptions = {}): Promise<CliRun> {
  const stdout = capture(Boolean(options.tty), options.columns);
  const stderr = capture(Boolean(options.tty));
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]) as Readable & {
    isTTY?: boolean;
  };
  stdin.isTTY = Boolean(options.tty);
  const code = await run(args, {
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...options.env },
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    signal: options.signal ?? new AbortController().signal,
    cwd: options.cwd ?? process.cwd(),
  });
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
