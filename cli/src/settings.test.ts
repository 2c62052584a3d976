import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDir, resolveConfig, updateProfile, writePrivateFile } from './settings.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

describe('resolveConfig', () => {
  const file = {
    profiles: {
      default: {
        api_url: 'http://profile:1',
        brand: 'brand-profile',
        client_id: 'id-profile',
        client_secret: 'secret-profile',
      },
      staging: { api_url: 'http://staging:1' },
    },
  };

  it('takes flags over environment over profile over defaults, and says where each came from', () => {
    const config = resolveConfig({
      flags: { api_url: 'http://flag:1' },
      env: { XDG_CONFIG_HOME: '/cfg', LOYALTY_BRAND: 'brand-env', LOYALTY_API_URL: 'http://env:1' },
      file,
    });
    expect(config.settings.api_url).toEqual({ value: 'http://flag:1', source: 'flag' });
    expect(config.settings.brand).toEqual({ value: 'brand-env', source: 'env' });
    expect(config.settings.client_id).toEqual({ value: 'id-profile', source: 'profile' });
    expect(config.settings.token).toBeUndefined();
    expect(config.configPath).toBe('/cfg/loyalty/config.json');
  });

  it('falls back to the default API URL', () => {
    expect(resolveConfig({ env: {}, file: { profiles: {} } }).settings.api_url).toEqual({
      value: 'http://127.0.0.1:3000',
      source: 'default',
    });
  });

  it('selects the profile by flag, then LOYALTY_PROFILE, then "default"', () => {
    expect(
      resolveConfig({ flags: { profile: 'staging' }, env: { LOYALTY_PROFILE: 'default' }, file }).settings.api_url
        ?.value,
    ).toBe('http://staging:1');
    expect(resolveConfig({ env: { LOYALTY_PROFILE: 'staging' }, file }).profile).toEqual({
      name: 'staging',
      source: 'env',
    });
    expect(resolveConfig({ env: {}, file }).profile).toEqual({ name: 'default', source: 'default' });
  });

  it('ignores a relative XDG_CONFIG_HOME, as the XDG spec says', () => {
    expect(configDir({ XDG_CONFIG_HOME: 'relative', HOME: '/home/ada' })).toBe('/home/ada/.config/loyalty');
  });
});

describe('the profile file', () => {
  it('is created private to the user: file 0600 in a 0700 directory', async () => {
    const home = await tempConfigHome();
    const env = { XDG_CONFIG_HOME: home };
    await updateProfile(env, 'default', (p) => ({ ...p, client_secret: 's3cret' }));
    expect((await stat(join(home, 'loyalty'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(home, 'loyalty', 'config.json'))).mode & 0o777).toBe(0o600);
  });

  it('tightens the mode of an existing file it rewrites', async () => {
    const home = await tempConfigHome();
    await mkdir(join(home, 'loyalty'), { recursive: true });
    await writeFile(join(home, 'loyalty', 'config.json'), '{"profiles":{}}', { mode: 0o644 });
    await updateProfile({ XDG_CONFIG_HOME: home }, 'default', (p) => ({ ...p, brand: 'b' }));
    expect((await stat(join(home, 'loyalty', 'config.json'))).mode & 0o777).toBe(0o600);
  });

  it('survives writes of one process at the same instant: each has a temp file of its own', async () => {
    const dir = join(await tempConfigHome(), 'loyalty');
    const file = join(dir, 'config.json');
    const writes = Array.from({ length: 20 }, (_, i) => writePrivateFile(dir, file, `{"n":${i}}`));
    await expect(Promise.all(writes)).resolves.toHaveLength(20);
    expect(JSON.parse(await readFile(file, 'utf8')).n).toBeTypeOf('number');
  });
});

describe('loyalty config', () => {
  it('lists every setting with its source and masks secrets', async () => {
    const home = await tempConfigHome();
    await updateProfile({ XDG_CONFIG_HOME: home }, 'default', () => ({
      client_id: 'acme-admin',
      client_secret: 'acme-admin-secret',
      brand: 'brand-acme',
    }));
    const result = await runCli(['config', 'list', '--json', '--api-url', 'http://flag:9'], {
      env: { XDG_CONFIG_HOME: home, LOYALTY_BRAND: 'brand-env' },
    });
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as {
      settings: Array<{ key: string; value: string | null; source: string | null }>;
    };
    const byKey = Object.fromEntries(listed.settings.map((s) => [s.key, s]));
    expect(byKey.api_url).toMatchObject({ value: 'http://flag:9', source: 'flag' });
    expect(byKey.brand).toMatchObject({ value: 'brand-env', source: 'env' });
    expect(byKey.client_id).toMatchObject({ value: 'acme-admin', source: 'profile' });
    expect(byKey.client_secret!.value).not.toContain('acme-admin-secret');
    expect(byKey.token).toMatchObject({ value: null, source: null });
    expect(result.stdout).not.toContain('acme-admin-secret');
  });

  it('prints a table for people', async () => {
    const home = await tempConfigHome();
    const result = await runCli(['config', 'list'], { env: { XDG_CONFIG_HOME: home } });
    expect(result.stdout).toMatch(/^SETTING\s+VALUE\s+FROM$/m);
    expect(result.stdout).toMatch(/^api_url\s+http:\/\/127\.0\.0\.1:3000\s+default$/m);
    expect(result.stderr).toContain(`file ${join(home, 'loyalty', 'config.json')}`);
  });

  it('sets and gets a value in the selected profile', async () => {
    const home = await tempConfigHome();
    const env = { XDG_CONFIG_HOME: home };
    expect(
      (await runCli(['--profile', 'staging', 'config', 'set', 'api-url', 'https://staging.example.com'], { env })).code,
    ).toBe(0);
    const got = await runCli(['--profile', 'staging', 'config', 'get', 'api_url'], { env });
    expect(got.stdout).toBe('https://staging.example.com\n');
    const file = JSON.parse(await readFile(join(home, 'loyalty', 'config.json'), 'utf8'));
    expect(file.profiles.staging).toEqual({ api_url: 'https://staging.example.com' });
  });

  it('refuses secrets on the command line and points at login', async () => {
    const result = await runCli(['config', 'set', 'client_secret', 'x'], {
      env: { XDG_CONFIG_HOME: await tempConfigHome() },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--client-secret-stdin');
  });

  it('masks a secret on get unless --reveal', async () => {
    const env = { XDG_CONFIG_HOME: await tempConfigHome(), LOYALTY_TOKEN: 'tok_1234567890abcdef' };
    expect((await runCli(['config', 'get', 'token'], { env })).stdout).not.toContain('tok_1234567890abcdef');
    expect((await runCli(['config', 'get', 'token', '--reveal'], { env })).stdout).toBe('tok_1234567890abcdef\n');
  });

  it('fails with exit 1 for a setting that is not set', async () => {
    const result = await runCli(['config', 'get', 'brand'], { env: { XDG_CONFIG_HOME: await tempConfigHome() } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('brand is not set');
  });
});
