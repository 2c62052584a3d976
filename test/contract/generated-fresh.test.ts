import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function genCheck(...extra: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'scripts/gen.mjs'), '--check', ...extra],
      { cwd: root },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}

describe('sdk/src/generated/openapi.ts', () => {
  it('is what `npm run gen` makes from the committed openapi.yaml', async () => {
    const result = await genCheck();
    // On failure the output says what to do: run `npm run gen` and commit the result.
    expect(result.output).toContain('is up to date');
    expect(result.code).toBe(0);
  }, 60_000);

  it('is reported stale when openapi.yaml changes without `npm run gen` (the check can fail)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-gen-'));
    try {
      // A schema change: the health status gains a second value.
      const changed = (await readFile(path.join(root, 'openapi.yaml'), 'utf8')).replace(
        /(\n {4}Health:\n(?: {6}.*\n)*? {10}type: string\n {10})const: ok\n/,
        '$1enum: [ok, degraded]\n',
      );
      expect(changed).toContain('enum: [ok, degraded]');
      const file = path.join(dir, 'openapi.yaml');
      await writeFile(file, changed);
      const result = await genCheck('--openapi', file);
      expect(result.code).toBe(1);
      expect(result.output).toContain('is stale');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
