// End to end: `loyalty sandbox clock …` and `loyalty sandbox reset` (the built CLI) with a client
// of two organizations (acme and globex) against the real server in sandbox mode. Without
// --organization the server's 422 on organization_id reaches the user as a message naming
// --organization; with it, only the named organization's clock moves and resets. The client is
// this test's own, made in its own database (the demo fixtures have no client of two organizations).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../server/src/lib/hash.js';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import type { LiveServer } from '#test-helpers/live-server.js';
import { startSandboxServer } from '#test-helpers/sandbox-server.js';

const CLIENT = 'acme-globex-sandbox';
const SECRET = 'acme-globex-sandbox-secret-of-this-test';

let live: LiveServer;
let cli: CliSandbox;
beforeAll(async () => {
  live = await startSandboxServer({}, { worker: false });
  await live.db.sql`INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
    VALUES (${CLIENT}, ${sha256(SECRET)}, ${['org-acme', 'org-globex']}, ${['tags.get', 'sandbox.manage']})`;
  cli = await cliSandbox(live.url, { LOYALTY_CLIENT_ID: CLIENT, LOYALTY_CLIENT_SECRET: SECRET });
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

/** The offset of an organization's clock (no row: 0). */
const offset = async (organization: string) =>
  (await live.db.sql`SELECT offset_seconds FROM sandbox_clocks WHERE organization_id = ${organization}`)[0]
    ?.offset_seconds ?? 0;

describe('loyalty sandbox with a token of two organizations', () => {
  it('without --organization each verb fails with a message naming --organization, and nothing moves', async () => {
    for (const args of [
      ['sandbox', 'clock'],
      ['sandbox', 'clock', 'advance', '1d'],
      ['sandbox', 'clock', 'set', new Date(Date.now() + 86_400_000).toISOString()],
    ]) {
      const res = await cli.run(args);
      expect(res.code, describeRun(res)).toBe(1);
      expect(res.stderr).toMatch(/--organization: The organization_id field is required/);
      expect(res.stderr).toMatch(/--organization <id>/);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
    expect([await offset('org-acme'), await offset('org-globex')]).toEqual([0, 0]);
  });

  it("--organization moves, shows and resets only that organization's clock", async () => {
    const advanced = await cli.run(['sandbox', 'clock', 'advance', '2d', '--organization', 'org-globex']);
    expect(advanced.code, describeRun(advanced)).toBe(0);
    expect(advanced.stdout).toMatch(/2d ahead of real time/);
    expect([await offset('org-acme'), await offset('org-globex')]).toEqual([0, 172_800]);

    const shown = await cli.run(['sandbox', 'clock', '--organization', 'org-globex', '--json']);
    expect(shown.code, describeRun(shown)).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ organization_id: 'org-globex', offset_seconds: 172_800 });
    const acme = await cli.run(['sandbox', 'clock', '--organization', 'org-acme', '--json']);
    expect(JSON.parse(acme.stdout)).toMatchObject({ organization_id: 'org-acme', offset_seconds: 0 });

    const reset = await cli.run(['sandbox', 'reset', '--yes', '--organization', 'org-globex', '--json']);
    expect(reset.code, describeRun(reset)).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({
      scope: 'organizations',
      organization_ids: ['org-globex'],
      clock: { organization_id: 'org-globex', offset_seconds: 0 },
    });
    expect(await offset('org-globex')).toBe(0);
  });

  it('reset without --organization resets both; another organization is a clear error', async () => {
    const other = await cli.run(['sandbox', 'reset', '--yes', '--organization', 'org-initech']);
    expect(other.code, describeRun(other)).toBe(1);
    expect(other.stderr).toMatch(/--organization org-initech is not one of the token's organizations/);
    expect(other.stderr).not.toMatch(/not in sandbox mode/);
    const both = await cli.run(['sandbox', 'reset', '--yes', '--json']);
    expect(both.code, describeRun(both)).toBe(0);
    expect(JSON.parse(both.stdout)).toMatchObject({ organization_ids: ['org-acme', 'org-globex'] });
  });
});
