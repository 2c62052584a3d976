// Runs the `loyalty` program: builds the commands the arguments name (./index.ts) and turns
// errors into output and exit codes (./report.ts, loaded when there is an error to report).
// bin/loyalty.js comes here through start.ts (which answers --help and --version alone), not
// through main.ts, whose buildProgram() imports every command.
import type { Command } from 'commander';
import { CommanderError } from 'commander';
import { CliError, ExitCode, usageError } from '../errors.js';
import { Output } from '../output.js';
import { attachRuntime, type Runtime } from '../runtime.js';
import { liveView } from '../ui/live.js';
import { loadProgram } from './index.js';
import { usageFailure } from './usage-errors.js';

function forEachCommand(command: Command, visit: (command: Command) => void): void {
  visit(command);
  for (const child of command.commands) forEachCommand(child, visit);
}

/** Runs the program on `argv` (without `node` and the script) and returns the exit code. */
export async function run(argv: readonly string[], runtime: Runtime): Promise<number> {
  const program = await loadProgram(argv);
  attachRuntime(program, runtime);
  const debug = argv.includes('--debug');
  const noColor = argv.includes('--no-color');
  const output = new Output({
    stdout: runtime.stdout,
    stderr: runtime.stderr,
    env: runtime.env,
    ...(noColor ? { color: false } : {}),
  });
  // addCommand() does not pass settings down, so apply them to the whole tree. Commander prints
  // nothing of its own errors: each becomes a usage error, reported as every other error is.
  forEachCommand(program, (command) => {
    command
      .exitOverride((error) => {
        if (error.exitCode === 0) throw error; // help and version
        throw usageFailure(error, command);
      })
      .showHelpAfterError(false)
      .configureOutput({
        writeOut: (text) => runtime.stdout.write(text),
        writeErr: (text) => runtime.stderr.write(text),
        outputError: () => undefined,
      });
  });
  try {
    refuseMalformedArguments(argv);
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    // Help and version end here too (exitOverride) with exit code 0; it needs no ./report.js.
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    const [{ reportError }, { lastRequestId }] = await Promise.all([
      import('./report.js'),
      import('../request-log.js'),
    ]);
    return reportError(error, output, debug, runtime.signal, lastRequestId(runtime));
  }
}

/**
 * Arguments end up in paths, URLs and JSON, where a NUL or a lone UTF-16 surrogate cannot go.
 * A real argv cannot hold them (C strings, decoded with replacement), but `run()` can be called
 * from code.
 */
function refuseMalformedArguments(argv: readonly string[]): void {
  const index = argv.findIndex((arg) => /[\0\p{Cs}]/u.test(arg));
  const arg = argv[index];
  if (arg === undefined) return;
  const what = arg.includes('\0') ? 'a NUL character' : 'a lone UTF-16 surrogate';
  throw usageError(`Argument ${index + 1} is not valid text (it has ${what}).`);
}

/** The entry point of bin/loyalty.js (through start.ts): wires the real process in and sets the exit code. */
export async function main(): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = (): void => {
    interrupts += 1;
    if (interrupts > 1) process.exit(ExitCode.interrupted);
    if (!liveView.active) process.stderr.write('\nStopping… (press Ctrl-C again to quit at once)\n');
    controller.abort(new CliError('Interrupted.', { exitCode: ExitCode.interrupted }));
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  // A closed pipe (`loyalty … | head`) is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.ok);
  });
  const code = await run(process.argv.slice(2), {
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
    cwd: process.cwd(),
  });
  process.exitCode = code;
}
