import { ConfigError } from '../config.js';

/**
 * A start-up failure whose message already says what went wrong and what to do: one
 * line naming the cause and the fix. Everything else that ends a start is described here
 * from its error code, or as an unexpected error.
 */
export class StartupError extends Error {}

/** `--debug` or LOYALTY_DEBUG=1: the stack too, for a bug report. */
export const debugRequested = (argv = process.argv, env = process.env): boolean =>
  argv.includes('--debug') || env.LOYALTY_DEBUG === '1';

type SystemError = NodeJS.ErrnoException & { address?: string; port?: number };

/** The one line a failed start prints (without the `loyalty: ` prefix). */
export function describeStartupFailure(error: unknown): string {
  if (error instanceof ConfigError || error instanceof StartupError) return oneLine(error.message);
  const e = (error ?? {}) as SystemError;
  if (e.syscall === 'listen' && e.code === 'EADDRINUSE') {
    return `port ${e.port} on ${e.address} is already in use (another server?): stop that process, or set PORT to a free port (PORT=0 picks one).`;
  }
  if (e.syscall === 'listen' && (e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL')) {
    return `cannot listen on ${e.address}:${e.port} (${e.code}): set HOST to an address of this machine and PORT to a free port above 1023.`;
  }
  const message = error instanceof Error ? error.message : error === undefined || error === null ? '' : String(error);
  return `start-up failed: ${oneLine(message) || 'an error without a message'} (this is unexpected; run with LOYALTY_DEBUG=1 for the stack and report it).`;
}

/**
 * A data directory that cannot be made or written, named with its cause and the fix; other
 * errors unchanged.
 */
export function dataDirFailure(dataDir: string, error: unknown): unknown {
  const e = error as SystemError;
  const why: Record<string, string> = {
    ENOTDIR: 'a part of that path is a file, not a directory',
    EEXIST: 'a part of that path is a file, not a directory',
    EROFS: 'it is on a read-only filesystem',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOSPC: 'the disk is full',
    ENOENT: 'a part of that path does not exist and cannot be created',
  };
  if (!e?.code || !why[e.code]) return error;
  const failure = new StartupError(
    `cannot create or write the data directory ${dataDir}${e.path && e.path !== dataDir ? ` (${e.code} on ${e.path})` : ` (${e.code})`}: ` +
      `${why[e.code]}. Set LOYALTY_DATA_DIR to a writable directory (or use DATABASE_URL).`,
  );
  failure.cause = error;
  return failure;
}

/** Prints a failed start as one line on stderr (with the stack under --debug / LOYALTY_DEBUG=1) and exits 1. */
export function exitOnStartupFailure(error: unknown, debug = debugRequested()): never {
  console.error(`loyalty: ${describeStartupFailure(error)}`);
  if (debug) console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  if (debug && error instanceof Error && error.cause instanceof Error)
    console.error('caused by:', error.cause.stack ?? error.cause.message);
  process.exit(1);
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();
