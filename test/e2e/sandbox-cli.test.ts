// End to end: `loyalty sandbox clock …` and `loyalty sandbox reset` (the built CLI) against the
// real server in sandbox mode, and the error against a server that is not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import type { LiveServer } from '#test-helpers/live-server.js';
import { startSandboxServer } from '#test-helpers/sandbox-server.js';

let live: LiveServer;
let off: LiveServer;
let cli: CliSandbox;
let cliOff: CliSandbox;
beforeAll(async () => {
  [live, off] = await Promise.all([
    startSandboxServer({}, { worker: false }),
    startSandboxServer({ sandbox: false }, { worker: false }),
  ]);
  [cli, cliOff] = await Promise.all([cliSandbox(live.url), cliSandbox(off.url)]);
});
afterAll(async () => {
  await cli?.cleanup();
  await cliOff?.cleanup();
  await live?.close();
  await off?.close();
});

/** The offset of acme's clock, the CLI's organization (no row: 0). */
const offset = async () =>
  (await live.db.sql`SELECT offset_seconds FROM sandbox_clocks WHERE organization_id = 'org-acme'`)[0]
    ?.offset_seconds ?? 0;

describe('loyalty sandbox', () => {
  it('clock shows the clock; clock advance 7d moves it a week; --json prints the clock', async () => {
    const shown = await cli.run(['sandbox', 'clock']);
    expect(shown.code, describeRun(shown)).toBe(0);
    expect(shown.stdout).toMatch(/^\d{4}-\d{2}-\d{2}T.*\(real time; real time /);
    const advanced = await cli.run(['sandbox', 'clock', 'advance', '7d']);
    expect(advanced.code, describeRun(advanced)).toBe(0);
    expect(advanced.stderr).toMatch(/Advanced the sandbox clock by 7d/);
    expect(advanced.stdout).toMatch(/7d ahead of real time/);
    expect(await offset()).toBe(604_800);
    const json = await cli.run(['sandbox', 'clock', 'advance', '90m', '--json']);
    expect(json.code, describeRun(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ offset_seconds: 604_800 + 5400 });
  });

  it('clock set moves it forward to a time; refuses going back and bad input with a clear error', async () => {
    const target = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const set = await cli.run(['sandbox', 'clock', 'set', target, '--json']);
    expect(set.code, describeRun(set)).toBe(0);
    expect(Math.abs(Date.parse(JSON.parse(set.stdout).now) - Date.parse(target))).toBeLessThan(5000);
    const back = await cli.run(['sandbox', 'clock', 'set', new Date().toISOString()]);
    expect(back.code).not.toBe(0);
    expect(back.stderr).toMatch(/set/);
    expect(back.stderr).not.toMatch(/\n\s+at /);
    for (const args of [
      ['sandbox', 'clock', 'advance', '1w'],
      ['sandbox', 'clock', 'set', 'tomorrow'],
    ]) {
      const bad = await cli.run(args);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr).toMatch(/<duration>|<time>/);
    }
  });

  it('reset asks for --yes without a terminal, then goes back to the fixtures (clock at 0)', async () => {
    await live.db.sql`INSERT INTO members (organization_id, email) VALUES ('org-acme', 'cli-reset@example.org')`;
    const refused = await cli.run(['sandbox', 'reset']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    expect((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]?.n).toBe(1);
    const reset = await cli.run(['sandbox', 'reset', '--yes']);
    expect(reset.code, describeRun(reset)).toBe(0);
    expect(reset.stderr).toMatch(/Reset the sandbox to its fixtures in \d+ ms/);
    expect((await live.db.sql`SELECT count(*)::int AS n FROM members`)[0]?.n).toBe(0);
    expect(await offset()).toBe(0);
    // the CLI's next command gets a new token by itself (client credentials)
    const after = await cli.run(['sandbox', 'clock']);
    expect(after.code, describeRun(after)).toBe(0);
  });

  it('says the server is not in sandbox mode when it is not', async () => {
    for (const args of [
      ['sandbox', 'clock'],
      ['sandbox', 'clock', 'advance', '1d'],
      ['sandbox', 'reset', '--yes'],
    ]) {
      const res = await cliOff.run(args);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toMatch(/is not in sandbox mode \(LOYALTY_SANDBOX\)/);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
