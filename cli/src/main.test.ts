import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, loggedInEnv, fakeApiServer } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

const server = fakeApiServer();

describe('exit codes and error output', { timeout: 20_000 }, () => {
  it('prints help with examples and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: loyalty');
    expect(result.stdout).toContain('Examples:');
  });

  it('has --help with examples on every command', async () => {
    const { buildProgram } = await import('./main.js');
    const leaves: string[][] = [];
    const walk = (command: import('commander').Command, path: string[]): void => {
      if (command.commands.length === 0) leaves.push(path);
      for (const child of command.commands) walk(child, [...path, child.name()]);
    };
    walk(buildProgram(), []);
    expect(leaves.length).toBeGreaterThan(25);
    for (const path of leaves) {
      const result = await runCli([...path, '--help']);
      expect(result.code, path.join(' ')).toBe(0);
      expect(result.stdout, path.join(' ')).toContain('Examples:');
    }
  });

  it('exits 2 on usage errors, with a pointer to --help', async () => {
    for (const args of [['bogus'], ['members', 'get'], ['members', 'import', 'x.csv', '--no-such-flag'], ['members']]) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
    }
    expect((await runCli(['bogus'])).stderr).toContain('(run with --help for usage)');
  });

  it('refuses an argument that is not well-formed text (a lone surrogate) as a usage error', async () => {
    const result = await runCli(['webhooks', 'delete', 'x\ud800'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('✖ Argument 3 is not valid text (it has a lone UTF-16 surrogate).\n');
    const nul = await runCli(['members', 'import', 'a\u0000.csv']);
    expect(nul.code).toBe(2);
    expect(nul.stderr).toBe('✖ Argument 3 is not valid text (it has a NUL character).\n');
  });

  it('refuses an API URL that is not an http(s) URL as a usage error, naming where it came from', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const flag = await runCli(['--api-url', 'api.test', 'tags', 'list'], { env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(
      '✖ The API URL "api.test" (from --api-url) is not an http(s) URL.\n  → For example: --api-url http://127.0.0.1:3000\n',
    );
    const fromEnv = await runCli(['tags', 'list'], { env: { ...env, LOYALTY_API_URL: ' ' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('(from LOYALTY_API_URL)');
  });

  it('exits 4 with what to do when not logged in', async () => {
    const result = await runCli(['tags', 'list'], {
      env: { XDG_CONFIG_HOME: await tempConfigHome(), LOYALTY_API_URL: API },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      '✖ Not logged in.\n  → Run `loyalty login`, or set LOYALTY_TOKEN, or LOYALTY_CLIENT_ID and LOYALTY_CLIENT_SECRET.\n',
    );
  });

  it('exits 4 when the API refuses the token or the ability', async () => {
    const home = await tempConfigHome();
    server.use(
      http.get(`${API}/tags`, () =>
        HttpResponse.json({ message: 'Unauthenticated.', error: 'unauthenticated' }, { status: 401 }),
      ),
    );
    const refused = await runCli(['tags', 'list'], {
      env: { XDG_CONFIG_HOME: home, LOYALTY_API_URL: API, LOYALTY_TOKEN: 'expired' },
    });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('The API refused the credentials (401 unauthenticated)');
    server.use(
      http.get(`${API}/tags`, () =>
        HttpResponse.json({ message: 'This action is unauthorized.', error: 'forbidden' }, { status: 403 }),
      ),
    );
    const forbidden = await runCli(['tags', 'list'], { env: loggedInEnv(home) });
    expect(forbidden.code).toBe(4);
    expect(forbidden.stderr).toContain('Permission denied: This action is unauthorized.');
  });

  it('says when the API cannot be reached, without a stack trace', async () => {
    server.use(http.get(`${API}/tags`, () => HttpResponse.error()));
    const result = await runCli(['tags', 'list'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(1);
    // Another host than this machine: the retries are made, each said as it starts.
    expect(result.stderr).toMatch(/^! Cannot reach the API at http:\/\/api\.test; retrying .* \(attempt 2 of 4\)…$/m);
    expect(result.stderr).toMatch(/^✖ Cannot reach the API at http:\/\/api\.test/m);
    expect(result.stderr).toContain('loyalty server');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('treats anything unexpected as a bug: short message, --debug for the stack', async () => {
    server.use(http.get(`${API}/tags`, () => HttpResponse.json({ success: true, data: 'not-a-list' })));
    const env = loggedInEnv(await tempConfigHome());
    const plain = await runCli(['tags', 'list'], { env });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^✖ Unexpected error: /);
    expect(plain.stderr).toContain('Run the command again with --debug');
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const debug = await runCli(['tags', 'list', '--debug'], { env });
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('keeps stdout for data: tables for people, JSON with --json', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const table = await runCli(['tags', 'list'], { env });
    expect(table.stdout).toMatch(/^TAG\s+EXTERNAL REFERENCE\s+UUID\s+BRAND\s+CREATED\nVIP\s+vip\s+/);
    const json = await runCli(['tags', 'list', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ external_reference: 'vip' })]);
    expect(json.stderr).toBe('');
  });

  it('colours only when allowed: never with NO_COLOR', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const colored = await runCli(['tags', 'list'], { env: { ...env, NO_COLOR: '', FORCE_COLOR: '1' } });
    expect(colored.stdout).toContain('\u001b[1m');
    const plain = await runCli(['tags', 'list'], { env: { ...env, NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(plain.stdout).not.toContain('\u001b[');
  });
});
