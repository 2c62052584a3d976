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
      if (path[0] !== 'options') expect(result.stdout, path.join(' ')).toContain('Examples:');
      // Defaults and choices read as text, not as the framework's JSON.
      expect(result.stdout, path.join(' ')).not.toMatch(/\(default: (\[\]|false|true|")|choices: "|display help for/);
    }
  });

  it("says commander's parse errors in the CLI's voice: ✖, → with the way on, exit 2, stderr", async () => {
    const cases: Array<[string[], string]> = [
      [
        ['tags', 'list', '--jsn'],
        '✖ Unknown option --jsn for `loyalty tags list`.\n  → Did you mean --json? See `loyalty tags list --help`.\n',
      ],
      [
        ['members', 'import', 'x.csv', '--no-such-flag'],
        '✖ Unknown option --no-such-flag for `loyalty members import`.\n  → See `loyalty members import --help`.\n',
      ],
      [['membrs'], '✖ `loyalty` has no command "membrs".\n  → Did you mean `loyalty members`? See `loyalty --help`.\n'],
      [['xyzzy'], '✖ `loyalty` has no command "xyzzy".\n  → See `loyalty --help`.\n'],
      [
        ['help', 'membrs'],
        '✖ `loyalty` has no command "membrs".\n  → Did you mean `loyalty help members`? See `loyalty --help`.\n',
      ],
      [
        ['members', 'help', 'bogus'],
        '✖ `loyalty members` has no command "bogus".\n  → See `loyalty members --help`.\n',
      ],
      [
        ['members', 'get'],
        '✖ `loyalty members get` needs the argument <member>.\n' +
          '  → Usage: loyalty members get [options] <member>. See `loyalty members get --help`.\n',
      ],
      [
        ['completion', 'fish', 'extra'],
        '✖ Too many arguments: `loyalty completion` takes 1, got 2 (fish, extra).\n' +
          '  → Usage: loyalty completion [options] <shell>. Quote a value that holds spaces. See `loyalty completion --help`.\n',
      ],
      [
        ['completion', 'zsh2'],
        '✖ "zsh2" is not a valid <shell>: it must be one of bash, zsh, fish.\n  → See `loyalty completion --help`.\n',
      ],
      [
        ['members', 'export', '--format', 'xml'],
        '✖ --format does not take "xml": it must be one of csv, jsonl.\n  → See `loyalty members export --help`.\n',
      ],
      [
        ['webhooks', 'create'],
        '✖ `loyalty webhooks create` needs --url <url>.\n  → See `loyalty webhooks create --help`.\n',
      ],
      [['tags', 'list', '--brand'], '✖ --brand needs a value.\n  → See `loyalty --help`.\n'],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(stderr);
      expect(result.stdout, args.join(' ')).toBe('');
    }
  });

  it('prints the help of a bare group (loyalty, loyalty members …) on stdout and exits 0, as --help does', async () => {
    for (const args of [[], ['members'], ['webhooks'], ['sandbox'], ['config'], ['tags']]) {
      const bare = await runCli(args);
      expect(bare.code, args.join(' ')).toBe(0);
      expect(bare.stderr, args.join(' ')).toBe('');
      expect(bare.stdout, args.join(' ')).toBe((await runCli([...args, '--help'])).stdout);
      expect(bare.stdout, args.join(' ')).toMatch(/^Usage: loyalty/);
    }
  });

  it('lists the global options once (`loyalty help options`), not in every command’s help', async () => {
    const topic = await runCli(['help', 'options']);
    expect(topic.code).toBe(0);
    for (const flag of [
      '--profile <name>',
      '--api-url <url>',
      '--brand <id>',
      '--token-file <path>',
      '--json',
      '--debug',
    ])
      expect(topic.stdout).toContain(`  ${flag}`);
    const listen = await runCli(['webhooks', 'listen', '--help']);
    expect(listen.stdout).not.toContain('Global Options:');
    expect(listen.stdout).not.toContain('--profile <name>');
    expect(listen.stdout).toMatch(
      /\nGlobal options such as --brand, --profile and --json: see `loyalty help options`\.\n$/,
    );
    expect((await runCli(['--help'])).stdout).toMatch(/\nHelp topics:\n {2}options /);
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
