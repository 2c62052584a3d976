// End to end: the CLI says one thing one way against the real server: an unknown brand in every
// brand-scoped command (tags list included), and a webhook URL the server refuses.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  // As `loyalty server` starts by default: no http:// or local webhook URLs.
  live = await startLiveServer({ webhookAllowInsecure: false }, { worker: false });
  cli = await cliSandbox(live.url);
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

const withoutRequestId = (text: string): string => text.replace(/ \(request id: [^)]+\)/g, '');

it('an unknown brand reads the same in every command, tags list included: exit 1', async () => {
  const expected =
    '✖ Brand "brand-nope" not found.\n' +
    '  → It came from --brand. Check the brand id; brands of other organizations are not visible to this login.\n';
  for (const args of [
    ['tags', 'list'],
    ['members', 'get', 'a@example.com'],
    ['tags', 'create', 'X', '--ref', 'x'],
    ['vouchers', 'issue', '--tag', 'x', '--coupon', 'c'],
    ['members', 'unsubscribe', 'a@example.com'],
  ]) {
    const result = await cli.run(['--brand', 'brand-nope', ...args]);
    expect(result.code, describeRun(result)).toBe(1);
    expect(withoutRequestId(result.stderr), args.join(' ')).toBe(expected);
  }
  // From the environment, the hint names it.
  const fromEnv = await cli.run(['members', 'get', 'a@example.com'], { env: { LOYALTY_BRAND: 'brand-nope' } });
  expect(fromEnv.stderr).toContain('It came from LOYALTY_BRAND.');
  // A known brand without tags is not an error.
  const known = await cli.run(['--brand', 'brand-acme', 'tags', 'list']);
  expect(known.code, describeRun(known)).toBe(0);
});

it('a refused webhook URL: its reason once, and the ways forward for a local receiver', async () => {
  const result = await cli.run(['webhooks', 'create', '--url', 'http://localhost:4242/webhooks']);
  expect(result.code, describeRun(result)).toBe(1);
  const stderr = withoutRequestId(result.stderr);
  expect(stderr).toMatch(/^✖ The server refused the webhook URL http:\/\/localhost:4242\/webhooks: it must use https/);
  expect(stderr.match(/must use https/g)).toHaveLength(1);
  expect(stderr).toContain('`loyalty webhooks listen --forward-to <url>`');
  expect(stderr).toContain('`loyalty server --webhook-allow-insecure` (LOYALTY_WEBHOOK_ALLOW_INSECURE=1)');
  const credentials = await cli.run(['webhooks', 'create', '--url', 'https://user:pw@example.com/hook']);
  expect(credentials.code, describeRun(credentials)).toBe(1);
  expect(credentials.stderr.match(/credentials/g)).toHaveLength(1);
  expect(credentials.stderr).not.toContain('--webhook-allow-insecure');
});

it('login: a refused secret says so (not "run loyalty login"); the URL from LOYALTY_API_URL is saved', async () => {
  const env = { LOYALTY_CLIENT_ID: undefined, LOYALTY_CLIENT_SECRET: undefined, LOYALTY_BRAND: undefined };
  const wrong = await cli.run(['login', '--client-id', 'acme-admin', '--client-secret-stdin'], {
    env,
    input: 'not-the-secret',
  });
  expect(wrong.code, describeRun(wrong)).toBe(4);
  expect(wrong.stderr).toContain(`✖ The API at ${live.url} refused the secret of client "acme-admin"`);
  expect(wrong.stderr).not.toContain('loyalty login');
  const right = await cli.run(
    ['login', '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
    {
      env,
      input: 'acme-admin-secret',
    },
  );
  expect(right.code, describeRun(right)).toBe(0);
  // Without LOYALTY_API_URL now: the profile holds the server's URL.
  const tags = await cli.run(['tags', 'list', '--json'], { env: { ...env, LOYALTY_API_URL: undefined } });
  expect(tags.code, describeRun(tags)).toBe(0);
});
