// `loyalty server`: runs the reference server (@loyalty/server's dist/start.js) in a child process
// with the flags turned into its environment variables (--port → PORT, --data-dir →
// LOYALTY_DATA_DIR, …); a variable already set stays unless its flag is given. Ctrl-C or a
// signal stops the server cleanly, and its exit code decides ours.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from '../../context.js';
import { CliError, ExitCode } from '../../errors.js';
import { CLI_VERSION } from '../../version.js';

/**
 * Node options of the server process, as `npm start` gives them (package.json). A cap on the old
 * generation makes V8 collect the garbage of bulk requests (2000-user bodies and answers) instead
 * of growing: a 1M-row import grew the server's RSS by 123 MB with V8's defaults, by 21 MB with
 * this, in the same time (Node 20). Node 24's V8 also lets the young generation grow to ~100 MB
 * under sign-ups (250 imports of 2000: +84 MB, +102 MB at 500); a semi-space of 8 MB keeps that
 * to +10 MB, in the same time. The server's live data is small (lists are streamed).
 */
export const SERVER_NODE_OPTIONS = ['--max-semi-space-size=8', '--max-old-space-size=512'];

export interface ServerOptions {
  port?: string;
  host?: string;
  databaseUrl?: string;
  dataDir?: string;
  pgPort?: string;
  fixtures?: string;
  processes?: string;
  worker: boolean;
  webhookAllowInsecure?: boolean;
  webhookRetryDelays?: string;
  webhookTimeoutMs?: string;
  rateLimitToken?: string;
  rateLimitIp?: string;
}

export function serverEnvironment(options: ServerOptions): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PORT: options.port,
    HOST: options.host,
    DATABASE_URL: options.databaseUrl,
    LOYALTY_DATA_DIR: options.dataDir,
    LOYALTY_PG_PORT: options.pgPort,
    LOYALTY_FIXTURES: options.fixtures,
    LOYALTY_API_PROCESSES: options.processes,
    LOYALTY_WORKER: options.worker ? undefined : 'off',
    LOYALTY_WEBHOOK_ALLOW_INSECURE: options.webhookAllowInsecure ? '1' : undefined,
    LOYALTY_WEBHOOK_RETRY_DELAYS: options.webhookRetryDelays,
    LOYALTY_WEBHOOK_TIMEOUT_MS: options.webhookTimeoutMs,
    LOYALTY_RATE_LIMIT_TOKEN: options.rateLimitToken,
    LOYALTY_RATE_LIMIT_IP: options.rateLimitIp,
  };
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** This CLI runs from an installed package (under node_modules), not from this repository's cli/. */
export function isInstalledPackage(moduleUrl: string = import.meta.url): boolean {
  return fileURLToPath(moduleUrl).split(sep).includes('node_modules');
}

/**
 * The embedded database's directory of an installed `loyalty server` when neither --data-dir nor
 * LOYALTY_DATA_DIR says: per user, $XDG_DATA_HOME/loyalty, or ~/.local/share/loyalty (the XDG
 * default; a relative XDG_DATA_HOME is invalid and ignored). In this repository the server's own
 * default stays (.loyalty/data under the working directory, as `npm start`).
 */
export function userDataDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_DATA_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'share'), 'loyalty');
}

/** Where the server keeps its embedded database in a project (the server's default, under its working directory). */
export const PROJECT_DATA_DIR = join('.loyalty', 'data');

/**
 * The project's data directory as git finds `.git`: `.loyalty/data` in `cwd` or the nearest folder
 * above it that holds one (absolute); undefined when none does.
 */
export function findProjectDataDir(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, PROJECT_DATA_DIR);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The server's start script: @loyalty/server next to this CLI. It is an optional peer dependency
 * (`npm i @loyalty/cli` alone brings no PostgreSQL binaries), so an installed CLI without it says
 * what to install.
 */
export function serverEntryPoint(): string {
  let packageJson: string;
  try {
    packageJson = fileURLToPath(import.meta.resolve('@loyalty/server/package.json'));
  } catch {
    if (isInstalledPackage()) {
      throw new CliError(
        '`loyalty server` needs the reference server package, @loyalty/server, which is not installed.',
        {
          hint: `Install it next to the CLI: \`npm install @loyalty/server@${CLI_VERSION}\` (with \`-g\` if the CLI is global).`,
        },
      );
    }
    // This repository without its workspace links: cli/dist/services/server → server/.
    packageJson = fileURLToPath(new URL('../../../../server/package.json', import.meta.url));
  }
  return join(dirname(packageJson), 'dist', 'start.js');
}

export async function runServer(ctx: Context, options: ServerOptions): Promise<void> {
  const entry = serverEntryPoint();
  if (!existsSync(entry)) {
    throw new CliError(`The reference server is not built (${relative(ctx.runtime.cwd, entry) || entry} is missing).`, {
      hint: 'Run `npm run build` (or `npx tsc -b server`) in the repository first.',
    });
  }
  const env = { ...ctx.runtime.env, ...serverEnvironment(options) };
  if (!env.DATABASE_URL && !env.LOYALTY_DATA_DIR) env.LOYALTY_DATA_DIR = defaultDataDir(ctx);
  const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, entry], {
    cwd: ctx.runtime.cwd,
    env,
    stdio: 'inherit',
  });
  // Ctrl-C in a terminal reaches the server too; a signal sent only to us is passed on.
  const stop = (): void => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  ctx.signal.addEventListener('abort', stop, { once: true });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', (error) => reject(new CliError(`Cannot start the server: ${error.message}`)));
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  ctx.signal.removeEventListener('abort', stop);
  if (code !== null && code !== 0)
    throw new CliError(`The server exited with code ${code}.`, { hint: 'See its messages above.' });
  if (signal !== null || ctx.signal.aborted) {
    ctx.output.info('Server stopped.');
    throw new CliError('', { exitCode: ExitCode.interrupted });
  }
}

/**
 * The data directory when neither --data-dir, LOYALTY_DATA_DIR nor DATABASE_URL says, always said
 * with its absolute path when it is not the one of this folder: an installed CLI's per-user one;
 * in a project, its `.loyalty/data` found from a subdirectory (issue 27: a start there made a new,
 * empty one), or a new one in this folder.
 */
function defaultDataDir(ctx: Context): string {
  const choose = '--data-dir or LOYALTY_DATA_DIR to choose another';
  if (isInstalledPackage()) {
    const dir = userDataDir(ctx.runtime.env);
    ctx.output.info(`Data directory: ${dir} (${choose})`);
    return dir;
  }
  const here = resolve(ctx.runtime.cwd, PROJECT_DATA_DIR);
  const found = findProjectDataDir(ctx.runtime.cwd);
  if (found === here) return here;
  if (found) {
    ctx.output.info(`Data directory: ${found}, the project's, found above this folder (${choose})`);
    return found;
  }
  ctx.output.info(`Data directory: ${here}, new: none in this folder or above (${choose})`);
  return here;
}
