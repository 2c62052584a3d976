// End to end: the built `loyalty` binary's help and its usage and credential errors (one line
// and what to do next, no stack trace). Nothing here needs a server: these fail before any request.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';

let cli: CliSandbox;

// Port 9 (discard) on loopback: a command that tried to reach the API would fail with exit 1, not 4.
beforeAll(async () => {
  cli = await cliSandbox('http://127.0.0.1:9');
});
afterAll(() => cli?.cleanup());

const noStackTrace = (text: string): void => {
  expect(text).not.toMatch(/^\s+at /m);
  expect(text).not.toMatch(/\.(js|ts):\d+/);
};

it('loyalty --help lists the commands and examples on stdout, exit 0', async () => {
  const result = await cli.run(['--help']);
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout).toMatch(/^Usage: loyalty \[options\] \[command\]/);
  for (const command of ['server', 'login', 'config', 'members', 'tags', 'vouchers', 'passes', 'orders', 'webhooks']) {
    expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  }
  expect(result.stdout).toContain('$ loyalty vouchers issue --tag vip --coupon coupon-welcome --wait');
  expect(result.stderr).toBe('');
});

it('without credentials: exit 4, one line saying how to log in, no request', async () => {
  const result = await cli.run(['members', 'get', 'nobody@example.org'], {
    env: { LOYALTY_CLIENT_ID: undefined, LOYALTY_CLIENT_SECRET: undefined },
  });
  expect(result.code, describeRun(result)).toBe(4);
  expect(result.stdout).toBe('');
  expect(result.stderr).toBe(
    '✖ Not logged in.\n  → Run `loyalty login`, or set LOYALTY_TOKEN, or LOYALTY_CLIENT_ID and LOYALTY_CLIENT_SECRET.\n',
  );
  noStackTrace(result.stderr);
});

it('an unknown command or option is a usage error in the CLI’s own style: exit 2, stderr only', async () => {
  const result = await cli.run(['members', 'frobnicate']);
  expect(result.code, describeRun(result)).toBe(2);
  expect(result.stderr).toBe('✖ `loyalty members` has no command "frobnicate".\n  → See `loyalty members --help`.\n');
  expect(result.stdout).toBe('');
  noStackTrace(result.stderr);
  const option = await cli.run(['tags', 'list', '--jsn']);
  expect(option.code, describeRun(option)).toBe(2);
  expect(option.stderr).toBe(
    '✖ Unknown option --jsn for `loyalty tags list`.\n  → Did you mean --json? See `loyalty tags list --help`.\n',
  );
});

it('a bare group prints its help on stdout and exits 0, like the bare program', async () => {
  for (const args of [[], ['members'], ['webhooks']]) {
    const result = await cli.run(args);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toMatch(/^Usage: loyalty/);
    expect(result.stderr).toBe('');
  }
});
