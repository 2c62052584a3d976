// The built server (`server/dist/start.js`, as `npm start` runs it, worker included) in a process
// of its own on a free port, on a database the benchmark gives it (DATABASE_URL), so that its RSS
// and CPU are its own and can be read from /proc/<pid>.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './server-dist.mjs';

/** The Node options `npm start` runs the server with (package.json), so the bench measures that server. */
const serverNodeOptions = (
  /exec node (.*?)\s*server\/dist\/start\.js/.exec(
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start,
  )?.[1] ?? ''
)
  .split(/\s+/)
  .filter(Boolean);

/**
 * @param {{ databaseUrl: string, env?: Record<string, string> }} options `env`: more LOYALTY_*
 *   settings (they win over the defaults here)
 * @returns {Promise<{ url: string, pid: number, stop: () => Promise<void>, kill: () => void, output: () => string }>}
 *   `kill`: SIGTERM at once, without waiting (for a signal handler)
 */
export async function startServerProcess({ databaseUrl, env = {} }) {
  const child = spawn(process.execPath, [...serverNodeOptions, path.join(root, 'server/dist/start.js')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      LOYALTY_SECRET_KEY: 'bench-only key of webhook secrets at rest',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The access log goes to stdout: read and dropped (only its end is kept for an error message).
  let tail = '';
  const keep = (chunk) => {
    tail = (tail + chunk).slice(-8000);
  };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    let seen = '';
    let found = false;
    const timer = setTimeout(() => reject(new Error(`server did not start in 120 s:\n${tail}`)), 120_000);
    child.stdout.on('data', (chunk) => {
      keep(chunk);
      if (found) return;
      seen += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match) {
        found = true;
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr.on('data', keep);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}):\n${tail}`));
    });
  });
  return {
    url,
    pid: /** @type {number} */ (child.pid),
    output: () => tail,
    kill: () => child.kill('SIGTERM'),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
