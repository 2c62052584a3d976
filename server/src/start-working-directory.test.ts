import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { root } from '#test-helpers/server-process.js';

/**
 * Issue 27, finding 2: no file of the working directory is read as configuration. graphile-worker
 * read `<cwd>/crontab` (a broken one stopped the start, "Failed to read crontab file" was logged at
 * every start) and searched the working directory for a configuration of its own, which it
 * parsed (a broken one stopped the start) or ran (JavaScript).
 */
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-start-cwd-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as its own user, which must reach the data directory
}, 60_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('starts from a folder holding a broken crontab and graphile-worker configuration, reads none of them, and logs nothing at warn level or above', async () => {
  const cwd = path.join(dir, 'project');
  const marker = path.join(dir, 'config-was-run');
  await mkdir(cwd);
  await writeFile(path.join(cwd, 'crontab'), 'this is not a crontab line\n');
  await writeFile(path.join(cwd, '.graphile-workerrc'), '{ "schema": \n');
  await writeFile(
    path.join(cwd, 'graphile-worker.config.cjs'),
    `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'run'); module.exports = { schema: 'elsewhere' };\n`,
  );
  const { LOYALTY_FIXTURES: _fixtures, LOYALTY_LOG_LEVEL: _level, ...inherited } = process.env; // a default start
  const child = spawn(process.execPath, [path.join(root, 'server/dist/start.js')], {
    cwd,
    env: {
      ...inherited,
      PORT: '0',
      HOST: '127.0.0.1',
      LOYALTY_DATA_DIR: path.join(dir, 'data'),
      DATABASE_URL: '',
      LOYALTY_SECRET_KEY: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    let url: string | undefined;
    for (const deadline = Date.now() + 90_000; !url; await sleep(50)) {
      url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${out}${err}`);
    }
    // The worker runs: /health/ready answers 200 once both runners fetch jobs and its heartbeat beats.
    let ready = 0;
    for (const deadline = Date.now() + 20_000; ready !== 200 && Date.now() < deadline; await sleep(200))
      ready = (await fetch(`${url}/health/ready`)).status;
    expect(ready, out + err).toBe(200);
    await sleep(1000); // the runners' first jobs (the stall check, retention) have run
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited, out + err).toBe(0);
  const levelOf = (line: string) => {
    try {
      return (JSON.parse(line) as { level?: number }).level;
    } catch {
      return undefined; // the URL line
    }
  };
  expect(out.split('\n').filter((line) => (levelOf(line) ?? 0) >= 40)).toEqual([]);
  expect(out + err).not.toMatch(/crontab/i);
  expect(existsSync(marker)).toBe(false);
}, 180_000);
