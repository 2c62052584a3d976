// `npm run bench`: runs every test/bench/*.mjs (but this file) one after another, in name order,
// each in its own Node process so none disturbs another's measurement. Arguments filter by
// name: `npm run bench -- server` runs only the benchmarks whose file name contains "server".
// Exit code 1 when any benchmark missed its target or failed. At the end, one table of every goal
// of issue 30: now, goal, the anchor measured beside it in the same run, the ratio now/anchor, and
// the machine's load average when the row came (a noisy run can be told apart), then each
// benchmark's load average before and after it.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printSummary } from './lib/summary-table.mjs';
import { SUMMARY_MARK } from './lib/summary.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
  .filter((f) => !filters.length || filters.some((s) => f.includes(s)))
  .sort();

/** Runs one benchmark with its output shown as it comes, and collects its summary rows. */
function runBench(file, rows) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(dir, file)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines)
        if (line.startsWith(SUMMARY_MARK))
          rows.push({ ...JSON.parse(line.slice(SUMMARY_MARK.length)), load: os.loadavg()[0] });
    });
    child.on('close', (status, signal) => resolve({ status, signal }));
  });
}

const results = [];
/** @type {import('./lib/summary.mjs').SummaryRow[]} */
const rows = [];
for (const file of files) {
  console.log(`\n=== ${file}`);
  const started = Date.now();
  const loadBefore = os.loadavg()[0];
  const { status, signal } = await runBench(file, rows);
  results.push({
    file,
    ok: status === 0,
    how: signal ?? `exit ${status}`,
    seconds: (Date.now() - started) / 1000,
    load: `${loadBefore.toFixed(1)} → ${os.loadavg()[0].toFixed(1)}`,
  });
}

console.log('\n=== summary');
for (const r of results)
  console.log(
    `${r.ok ? 'ok  ' : 'FAIL'} ${r.file.padEnd(28)} ${r.how.padEnd(8)} ${r.seconds.toFixed(1).padStart(7)} s   load ${r.load}`,
  );
if (!files.length) console.log(`no benchmark matches ${filters.join(', ')}`);
printSummary(rows);
console.log(
  `load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown CPU'})`,
);
process.exitCode = results.every((r) => r.ok) && files.length ? 0 : 1;
