import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchToken } from '#test-helpers/live-server.js';
import { hasExited, isRunning, postmasterPidOf, startServerProcess } from '#test-helpers/server-process.js';

/**
 * LOYALTY_API_PROCESSES=2 (`loyalty server --processes 2`): one URL line, requests served by two
 * API processes (observed from outside: the pid that owns the server end of each connection), and
 * SIGTERM stops them all, the worker and the embedded PostgreSQL, with exit code 0.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-cluster-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres`, which must reach the data directory
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One request on a connection of its own, kept open; the pid of the process holding the server end of it (ss -tnp). */
async function servedBy(url: string, token: string): Promise<{ status: number; pid: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const { status, localPort } = await new Promise<{ status: number; localPort: number }>((resolve, reject) => {
      const req = http.get(
        `${url}/tags?brand_id=brand-acme`,
        { agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, localPort: req.socket!.localPort! }));
        },
      );
      req.on('error', reject);
    });
    const serverPort = new URL(url).port;
    const lines = execFileSync(
      'ss',
      ['-tnpH', 'state', 'established', `( sport = :${serverPort} and dport = :${localPort} )`],
      { encoding: 'utf8' },
    );
    const pid = Number(/pid=(\d+)/.exec(lines)?.[1]);
    return { status, pid };
  } finally {
    agent.destroy();
  }
}

describe('LOYALTY_API_PROCESSES=2', () => {
  it('serves one URL from two API processes and stops everything on SIGTERM with exit code 0', async () => {
    const dataDir = path.join(dir, 'data');
    const server = await startServerProcess({
      LOYALTY_API_PROCESSES: '2',
      LOYALTY_DATA_DIR: dataDir,
      LOYALTY_RATE_LIMIT_TOKEN: '100000',
      LOYALTY_RATE_LIMIT_IP: '100000',
    });
    const { child, url } = server;
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.toMatch(/:0$/);
      const token = await fetchToken(url, 'acme-admin');
      const served = [];
      for (let i = 0; i < 8; i++) served.push(await servedBy(url, token));
      expect(served.map((s) => s.status)).toEqual(Array(8).fill(200));
      const pids = new Set(served.map((s) => s.pid));
      expect(pids.size, JSON.stringify(served)).toBe(2);
      for (const pid of pids) {
        expect(pid).not.toBe(child.pid); // API processes, not the primary
        const ppid = Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[1]);
        expect(ppid).toBe(child.pid);
      }
      expect(server.stdout().match(/listening on/g)).toHaveLength(1);
      expect(server.stderr()).toMatch(/API processes: 2/);
      const postmaster = await postmasterPidOf(dataDir);
      expect(isRunning(postmaster)).toBe(true);

      child.kill('SIGTERM');
      expect(await server.exited, server.stderr()).toBe(0);
      for (const pid of [...pids, postmaster]) expect(hasExited(pid), `pid ${pid} still running`).toBe(true);
      expect(server.stdout().match(/listening on/g)).toHaveLength(1);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
