import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { root } from './server-dist.mjs';

/** Seconds a measured run lasts (BENCH_SECONDS, default 10). */
export const benchSeconds = Number(process.env.BENCH_SECONDS ?? 10);
/** Concurrent connections of a run. */
export const benchConnections = 50;

/**
 * autocannon in a child process, so the load generator does not share the server's event loop.
 * Any non-2xx answer, error or timeout fails the bench: a figure is only worth reading when every
 * request succeeded.
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string, duration?: number, connections?: number }} [options]
 */
export async function cannon(
  url,
  { method = 'GET', headers = {}, body, duration = benchSeconds, connections = benchConnections } = {},
) {
  const args = [path.join(root, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(connections)];
  args.push('-d', String(duration), '-m', method);
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  if (body) args.push('-b', body);
  const { stdout } = await promisify(execFile)(process.execPath, [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const result = JSON.parse(stdout);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad)
    throw new Error(`${method} ${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
  };
}
