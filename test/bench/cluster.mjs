// LOYALTY_API_PROCESSES (node:cluster): authenticated GET /tags requests per second of the real
// server (`node server/dist/start.js`, embedded PostgreSQL in a temp dir) with 1 and with 2 API
// processes, at concurrency 50; printed with the ratio 2-proc / 1-proc. The load generator
// (autocannon) runs in a process of its own on the same machine, as does PostgreSQL: on 2 cores
// they compete with the server for CPU, so the ratio is well below 2 there.
// Run after building: `npx tsc -b server && node test/bench/cluster.mjs` (or `npm run bench -- cluster`).
// BENCH_SECONDS (default 10) per measurement. Fails only when a request fails.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { benchConnections as connections, benchSeconds as seconds, cannon } from './lib/cannon.mjs';
import { adminToken } from './lib/admin-token.mjs';
import { startServerProcess } from './lib/server-process.mjs';

/** The server with `processes` API processes; resolves with its URL and a stop function (its exit code). */
async function startServer(dataDir, processes) {
  return startServerProcess({
    argv: ['server/dist/start.js'],
    env: {
      LOYALTY_DATA_DIR: dataDir,
      LOYALTY_API_PROCESSES: String(processes),
      LOYALTY_RATE_LIMIT_TOKEN: '1000000000',
      LOYALTY_RATE_LIMIT_IP: '1000000000',
      LOYALTY_LOG_LEVEL: 'silent',
    },
  });
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-cluster-'));
await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
const results = {};
try {
  for (const processes of [1, 2]) {
    const server = await startServer(path.join(dir, 'data'), processes);
    let code;
    try {
      const auth = { authorization: `Bearer ${await adminToken(server.url)}` };
      await cannon(`${server.url}/tags`, { headers: auth, duration: 2 }); // warm-up: JIT, pools, plans (of every API process)
      results[processes] = await cannon(`${server.url}/tags`, { headers: auth });
    } finally {
      code = await server.stop();
    }
    if (code !== 0) throw new Error(`server with ${processes} API processes exited with ${code}`);
  }
  const line = (name, r) =>
    `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms`;
  console.log(
    `cluster: GET /tags (auth + rate limit), ${connections} connections, ${seconds} s per run (node ${process.version}, ${os.cpus().length} cores)`,
  );
  console.log(line('1 API process', results[1]));
  console.log(line('2 API processes', results[2]));
  console.log(`ratio 2-proc / 1-proc: ${(results[2].rps / results[1].rps).toFixed(2)}`);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
