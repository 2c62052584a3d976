// `npm run bench`: runs every test/bench/*.mjs (but this file) one after another, in name order,
// each in its own Node process so none disturbs another's measurement. Arguments filter by
// name: `npm run bench -- server` runs only the benchmarks whose file name contains "server".
// Exit code 1 when any benchmark missed its target or failed.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
  .filter((f) => !filters.length || filters.some((s) => f.includes(s)))
  .sort();

const results = [];
for (const file of files) {
  console.log(`\n=== ${file}`);
  const started = Date.now();
  const { status, signal } = spawnSync(process.execPath, [path.join(dir, file)], { stdio: 'inherit' });
  results.push({ file, ok: status === 0, how: signal ?? `exit ${status}`, seconds: (Date.now() - started) / 1000 });
}

console.log('\n=== summary');
for (const r of results)
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.file.padEnd(28)} ${r.how.padEnd(8)} ${r.seconds.toFixed(1)} s`);
if (!files.length) console.log(`no benchmark matches ${filters.join(', ')}`);
process.exitCode = results.every((r) => r.ok) && files.length ? 0 : 1;
