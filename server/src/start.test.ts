import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, postmasterPidOf, root, spawnStart, startServerProcess } from '#test-helpers/server-process.js';

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-start-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach the data directory.
  await chmod(dataDir, 0o755);
}, 180_000);
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** `node server/dist/start.js` on the embedded database in dataDir, in its own process group. */
const start = () =>
  startServerProcess(
    {
      LOYALTY_DATA_DIR: path.join(dataDir, 'data'),
      DATABASE_URL: '',
      LOYALTY_SECRET_KEY: '',
      LOYALTY_WEBHOOK_ALLOW_INSECURE: '1',
    },
    { detached: true },
  );

/** `node server/dist/start.js` with `env` over this process's environment, to its exit: its code and stderr. */
async function startToExit(env: Record<string, string>): Promise<{ code: number | null; err: string }> {
  const child = spawnStart({ DATABASE_URL: '', LOYALTY_SECRET_KEY: '', LOYALTY_DEBUG: '', ...env });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000); // a start that should fail but listens (or hangs) instead: within the tests' timeouts
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  return { code, err };
}

/** The stderr lines of a failed start, without the progress line of the embedded database's start. */
const failureLines = (err: string) =>
  err
    .trim()
    .split('\n')
    .filter((line) => !/^loyalty: stopping the PostgreSQL/.test(line));

async function token(url: string): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=acme-admin&client_secret=acme-admin-secret',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('node server/dist/start.js', () => {
  it('with DATABASE_URL and no LOYALTY_SECRET_KEY exits 1 with one line naming the variable', async () => {
    const { LOYALTY_SECRET_KEY: _unset, ...env } = process.env;
    const child = spawn(process.execPath, ['server/dist/start.js'], {
      cwd: root,
      env: { ...env, PORT: '0', DATABASE_URL: 'postgres://loyalty@127.0.0.1:1/loyalty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(err.trim().split('\n'), err).toHaveLength(1);
    expect(err).toMatch(/^loyalty: .*LOYALTY_SECRET_KEY is required with DATABASE_URL/);
  }, 30_000);

  it('serves /health, /openapi.yaml, tokens and tags over HTTP, and exits cleanly on SIGTERM', async () => {
    const server = await start();
    try {
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });

      const doc = await fetch(`${server.url}/openapi.yaml`);
      expect(doc.status).toBe(200);
      expect(doc.headers.get('content-type')).toMatch(/yaml/);
      expect(await doc.text()).toMatch(/^openapi: 3\.1/);

      // Rate-limit headers on an error response too, over a real socket.
      const refused = await fetch(`${server.url}/tags`, { headers: { authorization: 'Bearer nope' } });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('60');
      expect(refused.headers.get('ratelimit-policy')).toBe('"ip";q=60;w=60');

      const authorization = `Bearer ${await token(server.url)}`;
      const created = await fetch(`${server.url}/tags`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ brand_id: 'brand-acme', external_reference: 'start-test', tag: 'Kept between runs' }),
      });
      expect(created.status).toBe(201);
      const list = await fetch(`${server.url}/tags`, { headers: { authorization } });
      expect(list.status).toBe(200);
      expect(list.headers.get('x-ratelimit-limit')).toBe('600');
      expect(
        ((await list.json()) as { data: { external_reference: string }[] }).data.map((t) => t.external_reference),
      ).toContain('start-test');
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited, server.stderr()).toBe(0);
    expect(existsSync(path.join(dataDir, 'data', 'postmaster.pid'))).toBe(false);
  }, 120_000);

  it('without LOYALTY_SECRET_KEY keeps a generated key in the data directory (0600), and deliveries are signed with the secret answered at creation', async () => {
    const received: { body: string; signature: string }[] = [];
    const receiver = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({ body, signature: String(req.headers['loyalty-signature']) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const server = await start();
    try {
      const authorization = `Bearer ${await token(server.url)}`;
      const post = (url: string, body: unknown) =>
        fetch(`${server.url}${url}`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const created = await post('/webhook-subscriptions', { url: hook, events: ['member.created'] });
      expect(created.status).toBe(201);
      const { secret } = ((await created.json()) as { data: { secret: string } }).data;
      expect(secret).toMatch(/^whsec_/);
      expect(
        (await post('/members', { brand_id: 'brand-acme', email: `start-${Date.now()}@example.org` })).status,
      ).toBe(201);
      for (let i = 0; i < 200 && !received.length; i++) await new Promise((r) => setTimeout(r, 50));
      expect(received).toHaveLength(1);
      expect(received[0]!.signature).toBe(
        createHmac('sha256', Buffer.from(secret, 'utf8')).update(received[0]!.body).digest('hex'),
      );
      expect((await stat(path.join(dataDir, 'data', 'loyalty-secret-key'))).mode & 0o777).toBe(0o600);
    } finally {
      server.child.kill('SIGTERM');
      receiver.close();
    }
    expect(await server.exited, server.stderr()).toBe(0);
  }, 120_000);

  it('starts again on the same data directory with its data, and stops on SIGTERM to the whole process group', async () => {
    const server = await start();
    try {
      const list = await fetch(`${server.url}/tags`, {
        headers: { authorization: `Bearer ${await token(server.url)}` },
      });
      expect(
        ((await list.json()) as { data: { external_reference: string }[] }).data.map((t) => t.external_reference),
      ).toContain('start-test');
    } finally {
      process.kill(-server.child.pid!, 'SIGTERM');
    }
    expect(await server.exited, server.stderr()).toBe(0);
    expect(existsSync(path.join(dataDir, 'data', 'postmaster.pid'))).toBe(false);
  }, 120_000);

  it('after kill -9 of the server, which leaves its PostgreSQL running, starts again on the same data directory with its data', async () => {
    const first = await start();
    const postmaster = await postmasterPidOf(path.join(dataDir, 'data'));
    first.child.kill('SIGKILL'); // the node process only
    await first.exited;
    expect(isRunning(postmaster)).toBe(true); // PostgreSQL outlived its server: the state this start must recover from
    const again = await start();
    try {
      expect((await fetch(`${again.url}/health`)).status).toBe(200);
      const list = await fetch(`${again.url}/tags`, { headers: { authorization: `Bearer ${await token(again.url)}` } });
      expect(
        ((await list.json()) as { data: { external_reference: string }[] }).data.map((t) => t.external_reference),
      ).toContain('start-test');
      expect(again.stderr()).toContain(`stopping the PostgreSQL (pid ${postmaster})`);
      expect(isRunning(postmaster)).toBe(false);
    } finally {
      again.child.kill('SIGTERM');
    }
    expect(await again.exited, again.stderr()).toBe(0);
    expect(existsSync(path.join(dataDir, 'data', 'postmaster.pid'))).toBe(false);
  }, 120_000);

  it('on a data directory that a running server uses exits 1 with one line naming both pids, and leaves that server running', async () => {
    const running = await start();
    try {
      const postmaster = await postmasterPidOf(path.join(dataDir, 'data'));
      const { code, err } = await startToExit({ LOYALTY_DATA_DIR: path.join(dataDir, 'data') });
      expect(code).toBe(1);
      expect(err.trim().split('\n'), err).toHaveLength(1);
      expect(err).toContain(
        `is in use by PostgreSQL (pid ${postmaster}) of another running process (pid ${running.child.pid}): stop that server first, or set LOYALTY_DATA_DIR`,
      );
      expect((await fetch(`${running.url}/health`)).status).toBe(200);
      expect(isRunning(postmaster)).toBe(true);
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exited, running.stderr()).toBe(0);
  }, 120_000);

  it('with its port in use exits 1 with one line naming the port and the fix, before PostgreSQL starts', async () => {
    const taken = createTcpServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const fresh = path.join(dataDir, 'port-taken');
    try {
      const { code, err } = await startToExit({ PORT: String(port), LOYALTY_DATA_DIR: fresh });
      expect(code).toBe(1);
      expect(failureLines(err), err).toEqual([
        `loyalty: port ${port} on 127.0.0.1 is already in use (another server?): stop that process, or set PORT to a free port (PORT=0 picks one).`,
      ]);
      // Checked first: no initdb, no migrations, no PostgreSQL to stop (it took 30 s on a loaded CI machine).
      expect(existsSync(fresh)).toBe(false);
    } finally {
      taken.close();
    }
  }, 60_000);

  it('with a data directory that cannot be created exits 1 with one line naming it and LOYALTY_DATA_DIR; LOYALTY_DEBUG=1 adds the stack', async () => {
    const file = path.join(dataDir, 'a-file');
    await writeFile(file, 'not a directory\n'); // fails even as root, unlike a read-only mode
    const env = { LOYALTY_DATA_DIR: path.join(file, 'data') };
    const { code, err } = await startToExit(env);
    expect(code).toBe(1);
    expect(err.trim().split('\n'), err).toHaveLength(1);
    expect(err).toMatch(
      new RegExp(
        `^loyalty: cannot create or write the data directory ${path.join(file, 'data')} \\((ENOTDIR|EEXIST).*not a directory\\. Set LOYALTY_DATA_DIR to a writable directory`,
      ),
    );
    const debug = await startToExit({ ...env, LOYALTY_DEBUG: '1' });
    expect(debug.code).toBe(1);
    expect(debug.err.split('\n')[0]).toBe(err.trim());
    expect(debug.err).toMatch(/\n\s+at /);
    if (process.platform === 'linux') {
      // A parent that cannot hold directories at all: Node's recursive mkdir never returns there.
      const proc = await startToExit({ LOYALTY_DATA_DIR: '/proc/loyalty-start-test/data' });
      expect(proc.code).toBe(1);
      expect(proc.err.trim().split('\n'), proc.err).toHaveLength(1);
      expect(proc.err).toMatch(
        /^loyalty: cannot create or write the data directory \/proc\/loyalty-start-test\/data \(ENOENT on \/proc\/loyalty-start-test\).*Set LOYALTY_DATA_DIR/,
      );
    }
  }, 60_000);

  it('with wallet credentials that cannot sign exits 1 at once with one line naming the variable', async () => {
    // Checked before the database starts: this data directory is never made.
    const never = { LOYALTY_DATA_DIR: path.join(os.tmpdir(), `loyalty-wallet-check-${process.pid}`), PORT: '0' };
    const apple = await startToExit({
      ...never,
      LOYALTY_APPLE_PASS_CERT: '/nonexistent/pass-cert.pem',
      LOYALTY_APPLE_PASS_KEY: '/nonexistent/pass-key.pem',
      LOYALTY_APPLE_WWDR: '/nonexistent/wwdr.pem',
      LOYALTY_APPLE_TEAM_ID: 'ABCDE12345',
      LOYALTY_APPLE_PASS_TYPE_ID: 'pass.com.example.loyalty',
    });
    expect(apple.code).toBe(1);
    expect(apple.err.trim().split('\n'), apple.err).toHaveLength(1);
    expect(apple.err).toMatch(/^loyalty: LOYALTY_APPLE_PASS_CERT: neither PEM text nor a readable file/);
    const google = await startToExit({
      ...never,
      LOYALTY_GOOGLE_WALLET_ISSUER_ID: '3388000000012345678',
      LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT: '{"not": "a key"}',
    });
    expect(google.code).toBe(1);
    expect(google.err.trim().split('\n'), google.err).toHaveLength(1);
    expect(google.err).toMatch(/^loyalty: LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT has no /);
    expect(google.err).not.toMatch(/start-up failed/);
    expect(existsSync(never.LOYALTY_DATA_DIR)).toBe(false);
  }, 70_000);

  it('with a bad environment value exits 1 with one line naming the variable; LOYALTY_DEBUG=1 adds the stack', async () => {
    const { code, err } = await startToExit({ PORT: 'eighty' });
    expect(code).toBe(1);
    expect(err.trim().split('\n'), err).toHaveLength(1);
    expect(err).toMatch(/^loyalty: Invalid configuration: "PORT" must be a number/);
    const debug = await startToExit({ PORT: 'eighty', LOYALTY_DEBUG: '1' });
    expect(debug.code).toBe(1);
    expect(debug.err.split('\n')[0]).toBe(err.trim());
    expect(debug.err).toMatch(/\n\s+at /);
  }, 30_000);
});
