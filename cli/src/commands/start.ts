// bin/loyalty.js starts here. The root's help and the version are printed from the tree's
// description (root-help.ts) without loading commander or any command: they are what a first try
// of a CLI runs, and commander's import alone cost about half of `node -e 0` again (issue 30).
// Every other run goes on to commands/run.ts.
import { ExitCode } from '../errors.js';
import { CLI_VERSION } from '../version.js';
import { rootHelp } from './root-help.js';

/**
 * What `loyalty` prints for arguments that need nothing but the tree's description: the root's
 * help (`loyalty`, `--help`, `-h`, `help`) and the version (`--version`, `-v`); undefined for
 * any other arguments, which the full program handles.
 */
export function quickAnswer(
  argv: readonly string[],
  stdout: { isTTY?: boolean; columns?: number },
): string | undefined {
  if (argv.length > 1) return undefined;
  const [arg] = argv;
  if (arg === undefined || arg === '--help' || arg === '-h' || arg === 'help') {
    return rootHelp(stdout.isTTY ? stdout.columns : undefined);
  }
  if (arg === '--version' || arg === '-v') return `${CLI_VERSION}\n`;
  return undefined;
}

/** The entry point of bin/loyalty.js. */
export async function start(): Promise<void> {
  const text = quickAnswer(process.argv.slice(2), process.stdout);
  if (text === undefined) {
    await (await import('./run.js')).main();
    return;
  }
  // A closed pipe (`loyalty --help | head`) is not an error, as in run.ts.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.ok);
  });
  process.stdout.write(text);
}
