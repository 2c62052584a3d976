import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The root vitest config runs `tsc` without a project for typecheck, which checks no file; until it
// points at sdk/tsconfig.test.json, this runs the SDK's type-level tests (*.test-d.ts) and checks
// every other file of sdk/src, tests included.
it('type-checks sdk/src, including the type-level tests', async () => {
  const sdk = fileURLToPath(new URL('..', import.meta.url));
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const output = await new Promise<string>((resolve) =>
    execFile(
      process.execPath,
      [tsc, '-p', 'tsconfig.test.json', '--pretty', 'false'],
      { cwd: sdk },
      (_err, stdout, stderr) => resolve(stdout + stderr),
    ),
  );
  expect(output.trim()).toBe('');
}, 120_000);
