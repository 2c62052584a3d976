// The one place that turns errors into output and exit codes.
import { CommanderError } from 'commander';
import { ExitCode } from '../errors.js';
import { explainError } from '../explain.js';
import type { Output } from '../output.js';
import { requestIdSuffix } from '../request-log.js';

/** `lastRequestId`: the run's latest API request id, quoted in an unexpected error's message. */
export function reportError(
  error: unknown,
  output: Output,
  debug: boolean,
  signal?: AbortSignal,
  lastRequestId?: string,
): number {
  if (error instanceof CommanderError) {
    // Help and version end with exit code 0; everything else commander reports is a usage error
    // and it has printed the message already.
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  const explained = explainError(error, signal);
  if (explained) {
    if (explained.exitCode === ExitCode.partial) output.warn(explained.message);
    else if (explained.message) output.error(explained.message);
    if (explained.hint) output.info(`  ${output.err.dim('→')} ${explained.hint}`);
    if (debug && explained.cause instanceof Error && explained.cause.stack) output.info(explained.cause.stack);
    if (debug && error instanceof Error && error.stack && error !== explained.cause) output.info(error.stack);
    return explained.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  const own = error instanceof Error ? (error as { requestId?: unknown }).requestId : undefined;
  const requestId = typeof own === 'string' && own ? own : lastRequestId;
  output.error(`Unexpected error: ${message}${requestIdSuffix(requestId)}`);
  if (debug) {
    if (error instanceof Error && error.stack) output.info(error.stack);
  } else {
    output.info(
      `  ${output.err.dim('→')} This is a bug in loyalty. Run the command again with --debug for details, and report it.`,
    );
  }
  return ExitCode.error;
}
