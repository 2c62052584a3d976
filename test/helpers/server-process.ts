import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));

export type ServerProcess = {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<void>;
};

/**
 * `node server/dist/start.js` with PORT=0, HOST=127.0.0.1 and `env` over this process's environment,
 * its stdout and stderr piped. `detached`: its own process group, as test harnesses run it.
 */
export const spawnStart = (env: Record<string, string>, { detached = false } = {}): ChildProcess =>
  spawn(process.execPath, ['server/dist/start.js'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });

/**
 * `node server/dist/start.js` with PORT=0 and `env` over this process's environment; resolves once
 * it prints the URL it listens on. `detached`: its own process group, as test harnesses run it.
 */
export async function startServerProcess(
  env: Record<string, string>,
  { detached = false } = {},
): Promise<ServerProcess> {
  const child = spawnStart(env, { detached });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${err}`)));
  });
  return {
    child,
    url,
    exited,
    stdout: () => out,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The environment of a server on a test database of the caller's (DATABASE_URL; its fixtures are already loaded). */
export const onTestDatabase = (databaseUrl: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  LOYALTY_FIXTURES: 'none',
  LOYALTY_SECRET_KEY: 'test-only-secret-key-of-the-server-process',
  LOYALTY_RATE_LIMIT_TOKEN: '1000000',
  LOYALTY_RATE_LIMIT_IP: '1000000',
});

/** Whether a process runs (a zombie, which an orphan becomes when nothing reaps it, does not). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
}

/** Whether a process is gone entirely: exited and reaped (a zombie still holds its pid, which PostgreSQL's lock file check sees). */
export function hasExited(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** The pid of the PostgreSQL running on a data directory, from its postmaster.pid. */
export const postmasterPidOf = async (dataDir: string): Promise<number> =>
  Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
