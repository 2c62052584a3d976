import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

const server = fakeApiServer();

const readConfig = async (home: string) => JSON.parse(await readFile(join(home, 'loyalty', 'config.json'), 'utf8'));

describe('loyalty login', { timeout: 20_000 }, () => {
  it('checks client credentials from stdin and stores them with API URL and brand in the profile', async () => {
    const home = await tempConfigHome();
    const result = await runCli(
      ['login', '--client-id', 'acme-admin', '--client-secret-stdin', '--api-url', API, '--brand', 'brand-acme'],
      {
        env: { XDG_CONFIG_HOME: home },
        stdin: 'acme-admin-secret\n',
      },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`✔ Logged in to ${API} with client acme-admin (profile "default"`);
    expect((await readConfig(home)).profiles.default).toEqual({
      client_id: 'acme-admin',
      client_secret: 'acme-admin-secret',
      api_url: API,
      brand: 'brand-acme',
    });
    expect((await stat(join(home, 'loyalty', 'config.json'))).mode & 0o777, 'the profile holds the secret: 0600').toBe(
      0o600,
    );
    expect((await stat(join(home, 'loyalty'))).mode & 0o777).toBe(0o700);
    // and later commands use them
    expect((await runCli(['tags', 'list', '--json'], { env: { XDG_CONFIG_HOME: home } })).code).toBe(0);
  });

  it('accepts a device client, which may not list tags (403 still proves the credentials)', async () => {
    const home = await tempConfigHome();
    const result = await runCli(
      ['--profile', 'till', 'login', '--client-id', 'acme-pos-1', '--client-secret-stdin', '--api-url', API],
      { env: { XDG_CONFIG_HOME: home }, stdin: 'acme-pos-1-secret' },
    );
    expect(result.code).toBe(0);
    expect((await readConfig(home)).profiles.till.client_id).toBe('acme-pos-1');
  });

  it('exits 4 and stores nothing when the API refuses the credentials', async () => {
    const home = await tempConfigHome();
    const result = await runCli(['login', '--client-id', 'acme-admin', '--client-secret-stdin', '--api-url', API], {
      env: { XDG_CONFIG_HOME: home },
      stdin: 'wrong',
    });
    expect(result.code).toBe(4);
    expect(result.stderr.replace(/ \(request id: [^)]+\)/, '')).toBe(
      `✖ The API at ${API} refused the secret of client "acme-admin" (invalid_client); nothing was saved.\n` +
        '  → Check the client id and its secret (and --api-url: another server has other clients), then try again.\n',
    );
    expect(result.stderr, 'not the command just run').not.toContain('loyalty login');
    await expect(readFile(join(home, 'loyalty', 'config.json'))).rejects.toThrow();
  });

  it('saves the API URL given by LOYALTY_API_URL, and the brand given by LOYALTY_BRAND', async () => {
    const home = await tempConfigHome();
    const result = await runCli(['login', '--client-id', 'acme-admin', '--client-secret-stdin'], {
      env: { XDG_CONFIG_HOME: home, LOYALTY_API_URL: API, LOYALTY_BRAND: 'brand-acme' },
      stdin: 'acme-admin-secret',
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await readConfig(home)).profiles.default).toMatchObject({ api_url: API, brand: 'brand-acme' });
    // so a later command without the environment reaches the same server
    expect((await runCli(['tags', 'list', '--json'], { env: { XDG_CONFIG_HOME: home } })).code).toBe(0);
  });

  it('on a terminal, asks for a brand, offering the brands of the client’s tags, and saves only a known one', async () => {
    const home = await tempConfigHome();
    server.use(
      http.post(`${API}/members/list`, async ({ request }) => {
        const body = (await request.clone().json()) as { brand_id: string };
        return body.brand_id === 'brand-acme'
          ? undefined
          : HttpResponse.json({ message: 'Brand not found.', error: 'not_found' }, { status: 404 });
      }),
    );
    const env = { XDG_CONFIG_HOME: home, LOYALTY_API_URL: API, LOYALTY_CLIENT_SECRET: 'acme-admin-secret' };
    const result = await runCli(['login', '--client-id', 'acme-admin'], { env, stdin: 'brand-acme\n', tty: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Brands with tags for this client: brand-acme');
    expect(result.stderr).toContain('Brand (Enter for brand-acme, "-" for none): ');
    expect((await readConfig(home)).profiles.default.brand).toBe('brand-acme');
    const wrong = await runCli(['login', '--client-id', 'acme-admin'], { env, stdin: 'brand-nope\n', tty: true });
    expect(wrong.code, wrong.stderr).toBe(0);
    expect(wrong.stderr).toContain('Brand "brand-nope" not found, so not saved');
    expect((await readConfig(home)).profiles.default.brand, 'the earlier brand stays').toBe('brand-acme');
  });

  it('without a terminal and without --brand, saves no brand and says how to give one', async () => {
    const home = await tempConfigHome();
    const result = await runCli(['login', '--client-id', 'acme-admin', '--client-secret-stdin', '--api-url', API], {
      env: { XDG_CONFIG_HOME: home },
      stdin: 'acme-admin-secret',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('No brand saved: pass --brand <id>');
    expect((await readConfig(home)).profiles.default.brand).toBeUndefined();
  });

  it('without a terminal, names the flag instead of prompting', async () => {
    const result = await runCli(['login', '--client-id', 'acme-admin', '--api-url', API], {
      env: { XDG_CONFIG_HOME: await tempConfigHome() },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Client secret is needed, but there is no terminal to ask on.');
    expect(result.stderr).toContain('Pass --client-secret-stdin');
    const noId = await runCli(['login', '--api-url', API], { env: { XDG_CONFIG_HOME: await tempConfigHome() } });
    expect(noId.stderr).toContain('Pass --client-id <id>.');
  });

  it('stores a token from --token-file, replacing client credentials', async () => {
    const home = await tempConfigHome();
    await runCli(['login', '--client-id', 'acme-admin', '--client-secret-stdin', '--api-url', API, '--no-verify'], {
      env: { XDG_CONFIG_HOME: home },
      stdin: 'acme-admin-secret',
    });
    const result = await runCli(['login', '--token-file', '-', '--no-verify'], {
      env: { XDG_CONFIG_HOME: home },
      stdin: 'tok_abc\n',
    });
    expect(result.code).toBe(0);
    expect((await readConfig(home)).profiles.default).toEqual({ api_url: API, token: 'tok_abc' });
  });
});

describe('before logging in', { timeout: 20_000 }, () => {
  it('says "Not logged in" before "No brand given": logging in gives both', async () => {
    const result = await runCli(['members', 'get', 'a@example.com'], {
      env: { XDG_CONFIG_HOME: await tempConfigHome(), LOYALTY_API_URL: API },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^✖ Not logged in\.\n/);
  });

  it('a mistyped --profile names the profiles there are, and the closest', async () => {
    const home = await tempConfigHome();
    for (const profile of ['default', 'till'])
      await runCli(['--profile', profile, 'login', '--token-file', '-', '--no-verify', '--api-url', API], {
        env: { XDG_CONFIG_HOME: home },
        stdin: 'tok',
      });
    const result = await runCli(['--profile', 'tll', 'tags', 'list'], { env: { XDG_CONFIG_HOME: home } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `✖ No profile "tll" (from --profile) in ${join(home, 'loyalty', 'config.json')}.\n` +
        '  → Profiles: default, till. Did you mean "till"? To create "tll", run `loyalty login --profile tll`.\n',
    );
    const far = await runCli(['members', 'get', 'a@example.com'], {
      env: { XDG_CONFIG_HOME: home, LOYALTY_PROFILE: 'nope' },
    });
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('No profile "nope" (from LOYALTY_PROFILE)');
    expect(far.stderr).not.toContain('Did you mean');
  });
});
