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

it('an unknown command is a usage error: exit 2', async () => {
  const result = await cli.run(['members', 'frobnicate']);
  expect(result.code, describeRun(result)).toBe(2);
  expect(result.stderr).toContain("unknown command 'frobnicate'");
  noStackTrace(result.stderr);
});
