import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

fakeApiServer();

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
    expect(result.stderr).toContain('The API refused the client credentials (invalid_client).');
    await expect(readFile(join(home, 'loyalty', 'config.json'))).rejects.toThrow();
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
