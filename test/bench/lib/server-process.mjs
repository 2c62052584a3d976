// The built server (`server/dist/start.js`, as `npm start` runs it, worker included) in a process
// of its own on a free port, so that its RSS and CPU are its own and can be read from /proc/<pid>.
// The one door every benchmark starts a server process through.
//
// The server's output (a JSON line per request and per delivery attempt) goes straight from the
// child into a log file: the benchmark's own process never reads it while it measures. (Issue 30:
// the soak bench appended stdout to one string and ran a regex over the whole string on every
// chunk; the quadratic scan starved the bench's event loop, its receiver and its readers, and the
// soak reported a collapse that was its own.) The URL is found by reading the file's new bytes
// until the "listening on" line shows, and never again.
import { spawn } from 'node:child_process';
import { closeSync, createReadStream, fstatSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { root } from './server-dist.mjs';

/** The Node options `npm start` runs the server with (package.json), so the bench measures that server. */
const serverNodeOptions = (
  /exec node (.*?)\s*server\/dist\/start\.js/.exec(
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start,
  )?.[1] ?? ''
)
  .split(/\s+/)
  .filter(Boolean);

const LISTENING = /listening on (http:\/\/\S+)/;

/** The last `bytes` of a file, as text ('' when it cannot be read). */
function tailOf(file, bytes = 8000) {
  let fd;
  try {
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(bytes);
    const { size } = fstatSync(fd);
    const start = Math.max(0, size - bytes);
    const read = readSync(fd, buffer, 0, bytes, start);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Reads the file from `offset` on every `intervalMs` until `pattern` matches the new text (a carry
 * of the previous read's end covers a line split between reads); resolves with the match.
 */
function watchFor(file, pattern, { intervalMs = 50, signal }) {
  return new Promise((resolve, reject) => {
    let offset = 0;
    let carry = '';
    const buffer = Buffer.alloc(64 * 1024);
    const timer = setInterval(() => {
      if (signal.aborted) {
        clearInterval(timer);
        reject(signal.reason);
        return;
      }
      let fd;
      try {
        fd = openSync(file, 'r');
        for (;;) {
          const read = readSync(fd, buffer, 0, buffer.length, offset);
          if (read === 0) break;
          offset += read;
          const text = carry + buffer.subarray(0, read).toString('utf8');
          const match = pattern.exec(text);
          if (match) {
            clearInterval(timer);
            resolve(match);
            return;
          }
          carry = text.slice(-512);
        }
      } catch {
        // not written yet
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    }, intervalMs);
  });
}

/**
 * @param {{
 *   databaseUrl?: string,
 *   env?: Record<string, string>,
 *   argv?: string[],
 *   logFile?: string,
 * }} options
 *   `databaseUrl`: the server's DATABASE_URL; without it (and without LOYALTY_DATA_DIR in `env`
 *   pointing somewhere) the server starts its embedded PostgreSQL.
 *   `env`: more settings (they win over the defaults here).
 *   `argv`: what node runs instead of `npm start`'s `server/dist/start.js` (e.g. the `loyalty` bin
 *   with `server` and its flags).
 *   `logFile`: where the server's stdout and stderr go; by default a file in a temp directory that
 *   `stop()` removes (set LOYALTY_BENCH_KEEP_LOGS=1 to keep it and print its path).
 * @returns {Promise<{ url: string, pid: number, logFile: string, stop: () => Promise<number | null>,
 *   kill: () => void, output: () => string, countLines: (pattern: RegExp) => Promise<number> }>}
 *   `kill`: SIGTERM at once, without waiting (for a signal handler); `stop`: SIGTERM and the exit
 *   code; `output`: the log's last 8 KB (for an error message); `countLines`: lines of the log that
 *   match, read once as a stream.
 */
export async function startServerProcess({ databaseUrl, env = {}, argv, logFile }) {
  const ownDir = logFile ? undefined : await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-log-'));
  const log = logFile ?? path.join(/** @type {string} */ (ownDir), 'server.log');
  const fd = openSync(log, 'a');
  const child = spawn(process.execPath, argv ?? [...serverNodeOptions, path.join(root, 'server/dist/start.js')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl ?? '',
      LOYALTY_SECRET_KEY: 'bench-only key of webhook secrets at rest',
      ...env,
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd); // the child holds its own copy
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const output = () => tailOf(log);
  const stopWatching = new AbortController();
  const url = await Promise.race([
    watchFor(log, LISTENING, { signal: stopWatching.signal }).then((match) => match[1]),
    exited.then((code) => {
      throw new Error(`server exited (${code}):\n${output()}`);
    }),
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`server did not start in 120 s:\n${output()}`)), 120_000).unref(),
    ),
  ]).finally(() => stopWatching.abort(new Error('stopped watching')));
  const cleanUp = () => {
    if (!ownDir) return;
    if (process.env.LOYALTY_BENCH_KEEP_LOGS) console.error(`server log kept: ${log}`);
    else rmSync(ownDir, { recursive: true, force: true });
  };
  return {
    url,
    pid: /** @type {number} */ (child.pid),
    logFile: log,
    output,
    countLines: async (pattern) => {
      let n = 0;
      for await (const line of createInterface({ input: createReadStream(log), crlfDelay: Infinity }))
        if (pattern.test(line)) n++;
      return n;
    },
    kill: () => child.kill('SIGTERM'),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      cleanUp();
      return code;
    },
  };
}
