import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LOYALTY_BIN } from '#test-helpers/cli.js';

/**
 * Issue 27, finding 8 (the server's half): `loyalty server` run from a subdirectory of a project
 * made a new, empty `.loyalty/data` there and printed the same relative path as the real one.
 */
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-cli-server-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as its own user, which must reach the data directory
}, 60_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `loyalty server --port 0 --fixtures none` in `cwd` with no data directory given, to its stop: the CLI's and the server's stderr. */
async function serverFrom(cwd: string): Promise<string> {
  const { LOYALTY_DATA_DIR: _dir, DATABASE_URL: _url, ...inherited } = process.env;
  const child = spawn(process.execPath, [LOYALTY_BIN, 'server', '--port', '0', '--fixtures', 'none'], {
    cwd,
    env: { ...inherited, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), LOYALTY_SECRET_KEY: '', CI: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (const deadline = Date.now() + 90_000; !/listening on http/.test(out); await sleep(50)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${out}${err}`);
    }
  } finally {
    child.kill('SIGTERM'); // passed on to the server, which stops its PostgreSQL
  }
  await exited;
  return err;
}

it("from a subdirectory of a project: uses the project's .loyalty/data and says where it is, absolute", async () => {
  const project = path.join(dir, 'project');
  const data = path.join(project, '.loyalty', 'data');
  const sub = path.join(project, 'fixtures', 'csv');
  await mkdir(data, { recursive: true });
  await mkdir(sub, { recursive: true });
  const err = await serverFrom(sub);
  expect(err).toContain(`Data directory: ${data}, the project's, found above this folder`);
  expect(err).toContain(`embedded PostgreSQL in ${data};`);
  expect(existsSync(path.join(data, 'PG_VERSION'))).toBe(true);
  expect(existsSync(path.join(sub, '.loyalty'))).toBe(false);
  expect(existsSync(path.join(data, 'postmaster.pid'))).toBe(false); // stopped with the CLI
}, 180_000);

it('where no folder up holds one: says that it makes a new data directory, with its absolute path', async () => {
  const lonely = path.join(dir, 'lonely');
  await mkdir(lonely);
  const data = path.join(lonely, '.loyalty', 'data');
  const err = await serverFrom(lonely);
  expect(err).toContain(`Data directory: ${data}, new: none in this folder or above`);
  expect(err).toContain(`embedded PostgreSQL in ${data};`);
  expect(existsSync(path.join(data, 'postmaster.pid'))).toBe(false);
}, 180_000);
