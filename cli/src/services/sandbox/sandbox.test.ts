import { mockLoyaltyApi, type MockLoyaltyApi } from '@loyalty/sdk/testing';
import { describe, expect, it } from 'vitest';
import { API, fakeApiServer, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

// `loyalty sandbox clock …` and `loyalty sandbox reset` on the mock API: a token of one
// organization needs no --organization; a token of several names one with --organization (sent as
// `organization_id`), and without it the CLI's error says to pass --organization.

const server = fakeApiServer();

/** The mock with an admin of acme only and one of acme and globex. */
function sandboxApi(): MockLoyaltyApi {
  const api = mockLoyaltyApi({
    baseUrl: API,
    clients: {
      'acme-admin': { secret: 'acme-admin-secret', token: 'token-acme-admin' },
      'multi-admin': {
        secret: 'multi-admin-secret',
        token: 'token-multi-admin',
        organizations: ['org-acme', 'org-globex'],
      },
    },
  });
  server.use(...api.handlers);
  return api;
}

const multi = async () =>
  loggedInEnv(await tempConfigHome(), {
    LOYALTY_CLIENT_ID: 'multi-admin',
    LOYALTY_CLIENT_SECRET: 'multi-admin-secret',
  });

const sent = (api: MockLoyaltyApi) =>
  api.requests.filter((r) => r.path.startsWith('/sandbox/')).map((r) => [r.method, r.path, r.body]);

describe('loyalty sandbox clock and reset, --organization', () => {
  it('a token of one organization sends no organization_id and needs no flag', async () => {
    const api = sandboxApi();
    const env = loggedInEnv(await tempConfigHome());
    const shown = await runCli(['sandbox', 'clock', '--json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ organization_id: 'org-acme', offset_seconds: 0 });
    const moved = await runCli(['sandbox', 'clock', 'advance', '2d'], { env });
    expect(moved.code, moved.stderr).toBe(0);
    const reset = await runCli(['sandbox', 'reset', '--yes'], { env });
    expect(reset.code, reset.stderr).toBe(0);
    expect(sent(api)).toEqual([
      ['GET', '/sandbox/clock', undefined],
      ['POST', '/sandbox/clock', { advance: '2d' }],
      ['POST', '/sandbox/reset', undefined],
    ]);
  });

  it('a token of several organizations: each verb sends --organization as organization_id', async () => {
    const api = sandboxApi();
    const env = await multi();
    const shown = await runCli(['sandbox', 'clock', '--organization', 'org-globex', '--json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ organization_id: 'org-globex' });
    const advanced = await runCli(['sandbox', 'clock', 'advance', '7d', '--organization', 'org-globex', '--json'], {
      env,
    });
    expect(advanced.code, advanced.stderr).toBe(0);
    expect(JSON.parse(advanced.stdout)).toMatchObject({ organization_id: 'org-globex', offset_seconds: 604_800 });
    const target = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const set = await runCli(['sandbox', 'clock', 'set', target, '--organization', 'org-acme'], { env });
    expect(set.code, set.stderr).toBe(0);
    const reset = await runCli(['sandbox', 'reset', '--yes', '--organization', 'org-globex', '--json'], { env });
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ organization_ids: ['org-globex'] });
    expect(reset.stderr).toMatch(/org-globex/);
    expect(sent(api)).toEqual([
      ['GET', '/sandbox/clock', undefined], // organization_id in the query: the mock answered globex's clock
      ['POST', '/sandbox/clock', { advance: '7d', organization_id: 'org-globex' }],
      ['POST', '/sandbox/clock', { set: target, organization_id: 'org-acme' }],
      ['POST', '/sandbox/reset', { organization_id: 'org-globex' }],
    ]);
  });

  it('a token of several organizations without --organization: the error names --organization', async () => {
    sandboxApi();
    const env = await multi();
    for (const args of [
      ['sandbox', 'clock'],
      ['sandbox', 'clock', 'advance', '1d'],
      ['sandbox', 'clock', 'set', new Date(Date.now() + 86_400_000).toISOString()],
    ]) {
      const res = await runCli(args, { env });
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr, args.join(' ')).toMatch(/--organization <id>/);
      expect(res.stderr).not.toMatch(/not in sandbox mode/);
    }
    const wrong = await runCli(['sandbox', 'clock', '--organization', 'org-initech'], { env });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/--organization/);
    expect(wrong.stderr).toMatch(/one of the organizations of the token/);
  });

  it('reset without --organization resets every organization of the token; another one is not found', async () => {
    const api = sandboxApi();
    const env = await multi();
    const all = await runCli(['sandbox', 'reset', '--yes', '--json'], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ organization_ids: ['org-acme', 'org-globex'] });
    const other = await runCli(['sandbox', 'reset', '--yes', '--organization', 'org-initech'], { env });
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/org-initech/);
    expect(other.stderr).toMatch(/--organization/);
    expect(other.stderr).not.toMatch(/not in sandbox mode/);
    expect(sent(api).at(-1)).toEqual(['POST', '/sandbox/reset', { organization_id: 'org-initech' }]);
  });
});
