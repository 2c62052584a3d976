// LOYALTY_API_PROCESSES (node:cluster): authenticated GET /tags requests per second of the real
// server (`node server/dist/start.js`, embedded PostgreSQL in a temp dir) with 1 and with 2 API
// processes, at concurrency 50; printed with the ratio 2-proc / 1-proc. The load generator
// (autocannon) runs in a process of its own on the same machine, as does PostgreSQL: on 2 cores
// they compete with the server for CPU, so the ratio is well below 2 there.
// Issue 30's goal: 2 processes ≥ 1.3× one. On a 2-core machine the bench cannot leave the API the
// cores: it prints where each run's CPU went (API processes, PostgreSQL, the load generator, as
// shares of the machine's cores, from /proc) and the requests per CPU-second of API and
// PostgreSQL, which say whether a second process would help were the cores free.
// Run after building: `npx tsc -b server && node test/bench/cluster.mjs` (or `npm run bench -- cluster`).
// BENCH_SECONDS (default 10) per measurement. Fails only when a request fails.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { benchConnections as connections, benchSeconds as seconds, cannon } from './lib/cannon.mjs';
import { adminToken } from './lib/admin-token.mjs';
import { endedChildrenCpuMs, treeCpuSplitMs } from './lib/proc-cpu.mjs';
import { startServerProcess } from './lib/server-process.mjs';
import { summaryRow } from './lib/summary.mjs';

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
      const before = { server: treeCpuSplitMs(server.pid), cannon: endedChildrenCpuMs(), at: performance.now() };
      const result = await cannon(`${server.url}/tags`, { headers: auth });
      const after = treeCpuSplitMs(server.pid);
      const wallMs = performance.now() - before.at;
      results[processes] = {
        ...result,
        cpu: {
          api: (after.other - before.server.other) / wallMs,
          postgres: (after.postgres - before.server.postgres) / wallMs,
          cannon: (endedChildrenCpuMs() - before.cannon) / wallMs,
        },
        perCpuSecond:
          (result.total * 1000) / (after.other - before.server.other + after.postgres - before.server.postgres),
      };
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
  const cores = os.cpus().length;
  for (const n of [1, 2]) {
    const { cpu, perCpuSecond } = results[n];
    const share = (c) => `${(c * 100).toFixed(0)} %`;
    console.log(
      `  CPU with ${n}: API ${share(cpu.api)}, PostgreSQL ${share(cpu.postgres)}, load generator ${share(cpu.cannon)} of one core; ` +
        `${share((cpu.api + cpu.postgres + cpu.cannon) / cores)} of the machine's ${cores}; ${perCpuSecond.toFixed(0)} requests per CPU-second of API and PostgreSQL`,
    );
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (${cores} CPUs)`,
  );
  summaryRow({
    id: 'api-processes-2',
    measure: '`GET /tags` with `LOYALTY_API_PROCESSES=2`',
    unit: 'req/s',
    now: results[2].rps,
    anchor: results[1].rps,
    anchorLabel: 'the same with 1 API process',
    goal: 1.3,
    goalOn: 'ratio',
    better: 'higher',
  });
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
