import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, root } from '#test-helpers/server-process.js';

/**
 * Issue 27, finding 1: Ctrl-C of `npm start` in a terminal sends SIGINT to the whole foreground
 * process group, node and (as it was) the embedded PostgreSQL alike. Each stop here is of a real
 * start in its own process group, as a terminal runs it: it must exit 0, log nothing at error
 * level, stop PostgreSQL once (never "starting it again") and leave no process behind. Also
 * SIGTERM and SIGHUP (a closed terminal) to the process alone, and a start piped into `tee`.
 */
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-start-stop-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as its own user, which must reach the data directory
}, 60_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Started = { child: ChildProcess; output: () => string; exited: Promise<[number | null, string | null]> };

/** `command` (argv, or a shell line) in a process group of its own, stdout and stderr together; resolves once it listens. */
async function startInGroup(dataDir: string, command: string[]): Promise<Started> {
  const [file, ...args] = command;
  const child = spawn(file!, args, {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOYALTY_DATA_DIR: dataDir,
      DATABASE_URL: '',
      LOYALTY_SECRET_KEY: '',
      LOYALTY_FIXTURES: 'none',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (code, signal) => resolve([code, signal])),
  );
  for (const deadline = Date.now() + 90_000; !/listening on http:\/\/\S+/.test(out); await sleep(50)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${out}`);
  }
  await sleep(1000); // the worker's runners are up and listening for jobs: the state a Ctrl-C meets
  return { child, output: () => out, exited };
}

/** Processes whose command line names `dataDir` (the postmaster's `-D <dataDir>`), from the process table. */
function processesOf(dataDir: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,stat,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(dataDir) && !/^\s*\d+\s+Z/.test(line));
}

/** Lines that must never appear at a stop: error level and above, and a restart of PostgreSQL. */
function badLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    if (/exited unexpectedly|starting it again|error during shutdown|took too long/.test(line)) return true;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}

async function expectNothingLeft(dataDir: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; processesOf(dataDir).length && Date.now() < deadline; ) await sleep(100);
  expect(processesOf(dataDir)).toEqual([]);
  expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
}

describe('stopping node server/dist/start.js', () => {
  it('SIGINT to the whole process group (Ctrl-C in a terminal): exit 0, nothing at error level, PostgreSQL stopped once, nothing left', async () => {
    const dataDir = path.join(dir, 'data');
    const server = await startInGroup(dataDir, [process.execPath, 'server/dist/start.js']);
    process.kill(-server.child.pid!, 'SIGINT');
    expect(await server.exited, server.output()).toEqual([0, null]);
    expect(badLines(server.output())).toEqual([]);
    expect(server.output()).toContain('SIGINT received');
    await expectNothingLeft(dataDir);
  }, 180_000);

  it('SIGINT to the whole process group of a real `npm start` (npm, sh and node alike): the server stops cleanly, nothing left', async () => {
    const dataDir = path.join(dir, 'data');
    const server = await startInGroup(dataDir, ['npm', 'start', '--silent']);
    process.kill(-server.child.pid!, 'SIGINT');
    const [code, signal] = await server.exited;
    // npm ends with the signal's status (130) or passes on node's 0; either way the server itself stopped cleanly.
    expect([0, 130], server.output()).toContain(code ?? (signal === 'SIGINT' ? 130 : -1));
    expect(badLines(server.output())).toEqual([]);
    expect(server.output()).toContain('SIGINT received');
    await expectNothingLeft(dataDir);
  }, 180_000);

  // SIGHUP: the terminal the server runs in is closed.
  it.each(['SIGTERM', 'SIGHUP'] as const)(
    '%s to the process alone: exit 0, nothing at error level, nothing left',
    async (signal) => {
      const dataDir = path.join(dir, 'data');
      const server = await startInGroup(dataDir, [process.execPath, 'server/dist/start.js']);
      server.child.kill(signal);
      expect(await server.exited, server.output()).toEqual([0, null]);
      expect(badLines(server.output())).toEqual([]);
      await expectNothingLeft(dataDir);
    },
    180_000,
  );

  it('SIGINT to the process group of `start.js 2>&1 | tee log`: the server stops and nothing is left running', async () => {
    const dataDir = path.join(dir, 'data');
    const log = path.join(dir, 'tee.log');
    const server = await startInGroup(dataDir, [
      'sh',
      '-c',
      `"${process.execPath}" server/dist/start.js 2>&1 | tee "${log}"`,
    ]);
    const node = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(server.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .find((line) => line.includes('start.js'));
    const nodePid = Number(node?.trim().split(/\s+/)[0]);
    expect(nodePid).toBeGreaterThan(0);
    process.kill(-server.child.pid!, 'SIGINT'); // tee dies at once: the server's stdout and stderr become broken pipes
    await server.exited;
    for (const deadline = Date.now() + 30_000; isRunning(nodePid) && Date.now() < deadline; ) await sleep(100);
    expect(isRunning(nodePid)).toBe(false);
    await expectNothingLeft(dataDir);
    expect(badLines(await readFile(log, 'utf8'))).toEqual([]);
  }, 180_000);
});

/** util-linux `script`: runs a command on a pseudo-terminal of its own, what a terminal gives `npm start`. */
const SCRIPT = ['/usr/bin/script', '/bin/script'].find((file) => existsSync(file));

describe('in a terminal', () => {
  // Without util-linux's `script` (macOS has a BSD one with other flags) there is no pseudo-terminal to start in.
  it.skipIf(!SCRIPT)(
    'prints one block and then only access lines; Ctrl-C typed in the terminal stops it cleanly',
    async () => {
      const dataDir = path.join(dir, 'data');
      // script runs its command with $SHELL. Without `exec`, dash (SHELL unset or /bin/sh, as on CI)
      // stays the server's parent in the terminal's process group, gets the Ctrl-C too and exits 130
      // after the server's clean exit 0; bash and zsh exec a lone command, so it passed here.
      const child = spawn(SCRIPT!, ['-qfec', `exec "${process.execPath}" server/dist/start.js`, '/dev/null'], {
        cwd: root,
        env: {
          ...process.env,
          SHELL: '/bin/sh',
          PORT: '0',
          HOST: '127.0.0.1',
          LOYALTY_DATA_DIR: dataDir,
          DATABASE_URL: '',
          LOYALTY_SECRET_KEY: '',
          LOYALTY_LOG_LEVEL: 'info',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const lines = () => stripVTControlCharacters(out).replaceAll('\r', '').split('\n').filter(Boolean);
      for (const deadline = Date.now() + 90_000; !out.includes('Ctrl-C to stop.'); await sleep(50)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${out}`);
      }
      const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
      expect((await fetch(`${url}/health`)).status).toBe(200);
      await sleep(1500); // the worker's runners start and run their first jobs: none of that is shown
      expect(lines()).toEqual([
        `Loyalty reference server listening on ${url}`,
        `  API docs           ${url}/docs`,
        `  Data               ${dataDir}`,
        expect.stringMatching(/^ {2}Database {11}embedded PostgreSQL \d+\.\d+/),
        '  Fixtures           demo',
        '  Sandbox            on (/sandbox/*, Prefer: fault=…)',
        '  Insecure webhooks  off: https:// public URLs only (--webhook-allow-insecure)',
        'Ctrl-C to stop.',
        expect.stringMatching(/^\[[\d:.]+\] INFO: GET \/health 200 \d+ ms$/),
      ]);
      child.stdin.write('\u0003'); // Ctrl-C: the terminal signals its foreground process group
      expect(await exited, out).toBe(0);
      expect(lines().slice(9).join('\n')).toMatch(/^\^Cloyalty: SIGINT received, shutting down$/);
      await expectNothingLeft(dataDir);
    },
    180_000,
  );
});
