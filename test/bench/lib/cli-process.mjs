// The built `loyalty` binary (cli/bin/loyalty.js, the package's `bin`) in a process of its own with
// its own settings directory: wall time from spawn to exit and the peak RSS of the process.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { followPeak } from './proc-memory.mjs';
import { root } from './server-dist.mjs';

export const cliBin = path.join(root, 'cli/bin/loyalty.js');

/**
 * The Node options of the bin's shebang (`#!/usr/bin/env -S node <options>`): what an installed
 * `loyalty` runs with. The bench passes them to this Node (the project's, not the one on PATH).
 */
export const cliNodeOptions = (
  /^#!\S*env -S node(.*)$/m.exec(readFileSync(cliBin, 'utf8').split('\n')[0] ?? '')?.[1] ?? ''
)
  .trim()
  .split(/\s+/)
  .filter(Boolean);

/** The environment of a CLI whose profiles live under `configHome` (nothing from the caller's LOYALTY_*). */
export function cliEnv(configHome) {
  /** @type {NodeJS.ProcessEnv} */
  const env = { ...process.env, XDG_CONFIG_HOME: configHome, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.startsWith('LOYALTY_')) delete env[key];
  return env;
}

/**
 * Runs `loyalty <args>`; stdout and stderr are collected (the last 64 KB of each). After
 * `timeoutMs` the process is killed and `timedOut` is true.
 * @param {string[]} args
 * @param {{ env: NodeJS.ProcessEnv, input?: string, timeoutMs?: number }} options
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string, ms: number, peakRss: number, timedOut: boolean }>}
 */
export function runCli(args, { env, input, timeoutMs = 600_000 }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...cliNodeOptions, cliBin, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const peak = followPeak(/** @type {number} */ (child.pid));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout = (stdout + d).slice(-65536)));
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-65536)));
    child.stdin.end(input ?? '');
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started, peakRss: peak.stop(), timedOut });
    });
  });
}
