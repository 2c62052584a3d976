#!/usr/bin/env node
// npm run fuzz: every operation of openapi.yaml fuzzed from its schemas against a real test
// server (test/fuzz/operations.test.ts), at full size and with a fresh seed unless told:
//   FUZZ_RUNS (default 50000)   requests, spread evenly over the operations
//   FUZZ_SEED                   replays a run (the seed is printed first and in the table)
// The in-suite run (npm test) is the same test with 2,000 requests and a fixed seed.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const runs = process.env.FUZZ_RUNS ?? '50000';
const seed = process.env.FUZZ_SEED ?? String(randomInt(2 ** 31 - 1));
if (!/^\d+$/.test(runs) || !/^-?\d+$/.test(seed)) {
  console.error('fuzz: FUZZ_RUNS and FUZZ_SEED must be integers');
  process.exit(2);
}
console.error(`fuzz: ${runs} requests, seed ${seed} (replay with FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npm run fuzz)`);
const vitest = path.join(root, 'node_modules', '.bin', 'vitest');
const result = spawnSync(vitest, ['run', '--project', 'e2e', 'test/fuzz/operations.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FUZZ_RUNS: runs, FUZZ_SEED: seed, FUZZ_PRINT: '1' },
});
process.exit(result.status ?? 1);
