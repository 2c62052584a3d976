// The `loyalty` program: the command tree, registered explicitly, and the one place that
// turns errors into output and exit codes.
import { Command, CommanderError } from 'commander';
import { CliError, ExitCode, usageError } from './errors.js';
import { examples } from './help.js';
import { explainError } from './explain.js';
import { Output } from './output.js';
import { lastRequestId, requestIdSuffix } from './request-log.js';
import { refusedSecretOption } from './secrets.js';
import { attachRuntime, type Runtime } from './runtime.js';
import { liveView } from './ui/live.js';
import { apiCommand } from './commands/api.js';
import { completeCommand, completionCommand } from './commands/completion.js';
import { configCommand } from './commands/config/index.js';
import { loginCommand } from './commands/login.js';
import { membersCommand } from './commands/members/index.js';
import { ordersCommand } from './commands/orders/index.js';
import { passesCommand } from './commands/passes/index.js';
import { sandboxCommand } from './commands/sandbox/index.js';
import { serverCommand } from './commands/server.js';
import { tagsCommand } from './commands/tags/index.js';
import { triggerCommand } from './commands/trigger.js';
import { vouchersCommand } from './commands/vouchers/index.js';
import { webhooksCommand } from './commands/webhooks/index.js';
import { CLI_VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('loyalty')
    .description('Work with the Loyalty Pass API from the terminal: imports, tags, vouchers, webhooks.')
    .version(CLI_VERSION, '-v, --version')
    .option('--profile <name>', 'settings profile to use (env LOYALTY_PROFILE; default "default")')
    .option('--api-url <url>', 'API base URL (env LOYALTY_API_URL; default http://127.0.0.1:3000)')
    .option('--brand <id>', 'brand for brand-scoped commands (env LOYALTY_BRAND)')
    .option('--token-file <path>', 'read a bearer token from this file ("-" for stdin) instead of the profile')
    .addOption(
      refusedSecretOption(
        '--token',
        'bearer token',
        '--token-file <path> ("-" reads stdin), the LOYALTY_TOKEN environment variable, or a profile (`loyalty login`)',
      ),
    )
    .option('--json', 'print data as JSON')
    .option('--no-color', 'no colours (NO_COLOR is honoured too)')
    .option('--debug', 'show each API request (method, path, status, request id) and stack traces of errors')
    .addHelpText(
      'after',
      examples(
        ['loyalty server', 'start the reference server on http://127.0.0.1:3000'],
        [
          'printf %s acme-admin-secret | loyalty login --client-id acme-admin --client-secret-stdin --brand brand-acme',
          'log in with client credentials',
        ],
        ['loyalty members import members.csv', 'import members from a CSV (resumable with --resume)'],
        [
          'loyalty vouchers issue --tag vip --coupon coupon-welcome --wait',
          'issue a coupon to everyone on a tag and watch the job',
        ],
        ['loyalty webhooks listen --forward-to http://localhost:4242/webhooks', 'receive events locally, signed'],
      ),
    )
    .addHelpText(
      'after',
      'Secrets (tokens, client secrets, webhook secrets) come from files, stdin, the environment or a\nhidden prompt, never from flag values: those are visible to other users in the process list.\n',
    );

  program.addCommand(serverCommand());
  program.addCommand(loginCommand());
  program.addCommand(configCommand());
  program.addCommand(membersCommand());
  program.addCommand(tagsCommand());
  program.addCommand(vouchersCommand());
  program.addCommand(passesCommand());
  program.addCommand(ordersCommand());
  program.addCommand(webhooksCommand());
  program.addCommand(triggerCommand());
  program.addCommand(sandboxCommand());
  program.addCommand(apiCommand());
  program.addCommand(completionCommand());
  program.addCommand(completeCommand(), { hidden: true });
  return program;
}

function forEachCommand(command: Command, visit: (command: Command) => void): void {
  visit(command);
  for (const child of command.commands) forEachCommand(child, visit);
}

/** Runs the program on `argv` (without `node` and the script) and returns the exit code. */
export async function run(argv: readonly string[], runtime: Runtime): Promise<number> {
  const program = buildProgram();
  attachRuntime(program, runtime);
  const debug = argv.includes('--debug');
  const noColor = argv.includes('--no-color');
  const output = new Output({
    stdout: runtime.stdout,
    stderr: runtime.stderr,
    env: runtime.env,
    ...(noColor ? { color: false } : {}),
  });
  // addCommand() does not pass settings down, so apply them to the whole tree.
  forEachCommand(program, (command) => {
    command
      .exitOverride()
      .showHelpAfterError('(run with --help for usage)')
      .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
      .configureOutput({
        writeOut: (text) => runtime.stdout.write(text),
        writeErr: (text) => runtime.stderr.write(text),
        outputError: (text, write) => write(output.err.red(text)),
      });
  });
  try {
    refuseMalformedArguments(argv);
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
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

/** The entry point of bin/loyalty.js: wires the real process in and sets the exit code. */
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
