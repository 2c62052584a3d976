// Expected failures are CliError values: one readable line plus what to do next. Anything
// else that reaches the top-level handler is a bug and is reported as such.

export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  partial: 3,
  auth: 4,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;

  constructor(message: string, options: { exitCode?: ExitCode; hint?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? ExitCode.error;
    this.hint = options.hint;
  }
}

export function usageError(message: string, hint?: string): CliError {
  return new CliError(message, { exitCode: ExitCode.usage, ...(hint ? { hint } : {}) });
}

/** Thrown when the user pressed Ctrl-C and the command has already cleaned up. */
export class InterruptedError extends CliError {
  constructor(message = 'Interrupted.', hint?: string) {
    super(message, { exitCode: ExitCode.interrupted, ...(hint ? { hint } : {}) });
    this.name = 'InterruptedError';
  }
}

/**
 * A command that finished but not completely (rows rejected, members failed). The command
 * has printed its own summary; the handler only sets the exit code and, if given, a line.
 */
export class PartialSuccess extends CliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.partial, ...(hint ? { hint } : {}) });
    this.name = 'PartialSuccess';
  }
}
