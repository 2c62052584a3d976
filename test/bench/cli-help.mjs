// Start-up time of `loyalty --help` beside `node -e 0`, measured in the same run, alternating
// so both see the same machine load. Run after building: `npx tsc -b cli && node test/bench/cli-help.mjs`.
// Goal (issue 30): `loyalty --help` median at most 1.5× `node -e 0`'s (exit 1 otherwise).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { endedChildrenCpuMs } from './lib/proc-cpu.mjs';
import { summaryRow } from './lib/summary.mjs';

const bin = fileURLToPath(new URL('../../cli/bin/loyalty.js', import.meta.url));
if (!existsSync(new URL('../../cli/dist/main.js', import.meta.url))) {
  console.error('cli/dist is missing: run `npx tsc -b cli` first.');
  process.exit(1);
}
const runs = Number(process.env.RUNS ?? 20);

/** CPU time of each run too (Linux; 10 ms ticks): other work on the machine moves it less than wall time. */
const cpu = { node: [], help: [] };

function time(args, cpuTimes) {
  const cpuBefore = endedChildrenCpuMs();
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  cpuTimes?.push(endedChildrenCpuMs() - cpuBefore);
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9), min: sorted[0] };
};

// Warm-up (file cache, compile cache) is not what we measure.
time(['-e', '0']);
time([bin, '--help']);
const node = [];
const help = [];
for (let i = 0; i < runs; i++) {
  node.push(time(['-e', '0'], cpu.node));
  help.push(time([bin, '--help'], cpu.help));
}
const n = stats(node);
const h = stats(help);
const fmt = (s) => `median ${s.median.toFixed(1)} ms, p90 ${s.p90.toFixed(1)} ms, min ${s.min.toFixed(1)} ms`;
console.log(`node ${process.version}, ${runs} runs each`);
console.log(`node -e 0        ${fmt(n)}`);
console.log(`loyalty --help   ${fmt(h)}`);
console.log(
  `ratio (median)   ${(h.median / n.median).toFixed(2)}x; loyalty's own start-up ≈ ${(h.median - n.median).toFixed(1)} ms`,
);
const cpuTotal = (values) => values.reduce((sum, v) => sum + v, 0);
if (cpuTotal(cpu.node) > 0)
  console.log(
    `CPU time (mean)  node -e 0 ${(cpuTotal(cpu.node) / runs).toFixed(1)} ms, loyalty --help ${(cpuTotal(cpu.help) / runs).toFixed(1)} ms: ${(cpuTotal(cpu.help) / cpuTotal(cpu.node)).toFixed(2)}x`,
  );
console.log(
  `load average     ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (${os.cpus().length} CPUs)`,
);
const met = summaryRow({
  id: 'cli-help',
  measure: '`loyalty --help`, median',
  unit: 'ms',
  now: h.median,
  anchor: n.median,
  anchorLabel: '`node -e 0`',
  goal: 1.5,
  goalOn: 'ratio',
  better: 'lower',
});
process.exitCode = met ? 0 : 1;
