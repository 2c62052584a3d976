// Runs the built `loyalty` binary (cli/bin/loyalty.js → cli/dist) as a child process, the way a
// user or a script does, for end-to-end tests against the live reference server.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const LOYALTY_BIN = path.resolve(import.meta.dirname, '../../cli/bin/loyalty.js');

export type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

export type CliSandbox = {
  /** Temporary working directory (also holds the config dir); removed by `cleanup`. */
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Runs `loyalty …` to completion. */
  run: (args: string[], options?: RunOptions) => Promise<CliResult>;
  /** Starts `loyalty …` and returns at once, with its output collected as it arrives. */
  spawn: (args: string[], options?: RunOptions) => RunningCli;
  cleanup: () => Promise<void>;
};

export type RunOptions = { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number };

export type RunningCli = {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves when the process has exited. */
  exited: Promise<CliResult>;
  /** Resolves once stderr (or stdout) matches, rejects when the process exits first or after timeoutMs. */
  waitFor: (
    pattern: RegExp,
    options?: { stream?: 'stdout' | 'stderr'; timeoutMs?: number },
  ) => Promise<RegExpMatchArray>;
};

/**
 * A temporary cwd and XDG_CONFIG_HOME, and an environment pointing the CLI at `apiUrl` with the
 * demo admin client. CI=1 gives plain progress lines; nothing from the caller's environment
 * (profiles, tokens) leaks in except PATH and HOME.
 */
export async function cliSandbox(apiUrl: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<CliSandbox> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-cli-e2e-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    LOYALTY_API_URL: apiUrl,
    LOYALTY_CLIENT_ID: 'acme-admin',
    LOYALTY_CLIENT_SECRET: 'acme-admin-secret',
    LOYALTY_BRAND: 'brand-acme',
    CI: '1',
    ...extraEnv,
  };
  const start = (args: string[], options: RunOptions = {}): RunningCli => {
    const child = spawn(process.execPath, [LOYALTY_BIN, ...args], {
      cwd: dir,
      env: { ...env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let closed = false;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    const exited = new Promise<CliResult>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        closed = true;
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    });
    const waitFor: RunningCli['waitFor'] = (pattern, { stream = 'stderr', timeoutMs = 20_000 } = {}) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const match = (stream === 'stderr' ? stderr : stdout).match(pattern);
          if (match) {
            done();
            resolve(match);
          }
          return Boolean(match);
        };
        const onExit = (): void => {
          if (check()) return;
          done();
          reject(
            new Error(`loyalty ${args.join(' ')} exited before ${pattern}:\nstdout: ${stdout}\nstderr: ${stderr}`),
          );
        };
        const timeout = setTimeout(() => {
          done();
          reject(
            new Error(
              `timed out waiting for ${pattern} from loyalty ${args.join(' ')}:\nstdout: ${stdout}\nstderr: ${stderr}`,
            ),
          );
        }, timeoutMs);
        const source = stream === 'stderr' ? child.stderr! : child.stdout!;
        const done = (): void => {
          clearTimeout(timeout);
          source.off('data', onData);
          child.off('close', onExit);
        };
        const onData = (): void => void setImmediate(check);
        if (check()) return;
        if (closed) return onExit();
        source.on('data', onData);
        child.on('close', onExit);
      });
    return {
      child,
      get stdout() {
        return stdout;
      },
      get stderr() {
        return stderr;
      },
      exited,
      waitFor,
    };
  };
  return {
    dir,
    env,
    spawn: start,
    run: (args, options) => start(args, options).exited,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A compact description of a finished run, for assertion messages. */
export const describeRun = (result: CliResult): string =>
  `exit ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
