import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, describeRun } from '#test-helpers/cli.js';
import { type LiveServer, startLiveServer } from '#test-helpers/live-server.js';
import { DEMO_FIXTURES } from '#test-helpers/test-fixtures.js';
import { loadFixtureFile } from '../../server/src/services/platform/fixtures.js';

// Issue 27, finding 10: the SDK quick start crashed with an unhandled 422 when run after the CLI
// walkthrough (which makes the tag `vip`) or a second time. The file the docs show is run here,
// as a user runs it (`node sdk/examples/quickstart.mjs`), against the real server: twice, after
// the walkthrough's tag.

const QUICKSTART = path.resolve(import.meta.dirname, '../../sdk/examples/quickstart.mjs');

let live: LiveServer;
beforeAll(async () => {
  live = await startLiveServer();
  await loadFixtureFile(live.db.sql, DEMO_FIXTURES); // as `npm start`: the demo records too
});
afterAll(() => live?.close());

const runQuickstart = async () => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [QUICKSTART], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOYALTY_API_URL: live.url },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
};

describe('node sdk/examples/quickstart.mjs against the reference server', () => {
  it('exits 0 after the CLI walkthrough made the tag vip, and again when run a second time', async () => {
    const cli = await cliSandbox(live.url);
    try {
      const made = await cli.run(['tags', 'create', 'VIP customers', '--ref', 'vip']);
      expect(made.code, describeRun(made)).toBe(0);
    } finally {
      await cli.cleanup();
    }
    const first = await runQuickstart();
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
    expect(first.stdout).toMatch(/^member \S+ \(created\)$/m);
    expect(first.stdout).toMatch(/^voucher job done 1\/1$/m);
    // The demo fixtures' 5 members and Ada.
    expect(first.stdout).toMatch(/^6 members in brand-acme$/m);

    const second = await runQuickstart();
    expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(0);
    expect(second.stdout).toMatch(/^member \S+ \(already there\)$/m);
    expect(second.stdout).toMatch(/^voucher job done 1\/1$/m);
  });
});
