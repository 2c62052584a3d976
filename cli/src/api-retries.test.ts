// A server that is not running is said at once; every retry that is made is said as it starts.
import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { closedPortUrl } from '#test-helpers/closed-port.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { onApiRetry } from './api-retries.js';
import { LoyaltyError } from '@loyalty/sdk';

const env = async (url: string, credentials: NodeJS.ProcessEnv) => ({
  XDG_CONFIG_HOME: await tempConfigHome(),
  LOYALTY_API_URL: url,
  LOYALTY_BRAND: 'brand-acme',
  ...credentials,
});

describe('a server that is not running (connection refused on this machine)', () => {
  it.each([
    ['a token', { LOYALTY_TOKEN: 'token-1' }],
    // The token request was retried inside each retry of the call: 16 attempts, about 10 s.
    ['client credentials', { LOYALTY_CLIENT_ID: 'acme-admin', LOYALTY_CLIENT_SECRET: 'secret' }],
  ])('with %s: "Cannot reach the API at <url>" within a second, no retries', async (_what, credentials) => {
    const url = await closedPortUrl();
    const started = Date.now();
    const result = await runCli(['tags', 'list'], { env: await env(url, credentials) });
    const elapsed = Date.now() - started;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^✖ Cannot reach the API at ${url} \\(ECONNREFUSED\\)\\.`));
    expect(result.stderr).not.toContain('retrying');
    expect(elapsed, result.stderr).toBeLessThan(2000);
  });
});

describe('webhooks listen with the server not running', () => {
  it('fails at once instead of reconnecting to a feed it never reached', async () => {
    const url = await closedPortUrl();
    const started = Date.now();
    const result = await runCli(['webhooks', 'listen'], { env: await env(url, { LOYALTY_TOKEN: 'token-1' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^✖ Cannot reach the API at ${url} \\(ECONNREFUSED\\)\\.`));
    expect(result.stderr).not.toContain('Reconnecting');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('retries that are made are said at once', () => {
  it('a 503 is retried with a line on stderr naming the wait and the attempt', async () => {
    let calls = 0;
    const server = createServer((_request, response) => {
      calls += 1;
      response.setHeader('content-type', 'application/json');
      if (calls === 1) {
        response.statusCode = 503;
        response.setHeader('retry-after', '0');
        response.end(JSON.stringify({ message: 'Restarting.', error: 'service_unavailable' }));
      } else response.end(JSON.stringify({ success: true, data: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const address = server.address() as { port: number };
    const url = `http://127.0.0.1:${address.port}`;
    const result = await runCli(['tags', 'list'], { env: await env(url, { LOYALTY_TOKEN: 'token-1' }) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('! The API answered 503; retrying now (attempt 2 of 4)…\n');
    expect(calls).toBe(2);
  });

  it('a refused connection once the API has answered (a restart mid-import) is retried, and said', () => {
    const lines: string[] = [];
    let answered = false;
    const decide = onApiRetry({
      apiUrl: 'http://127.0.0.1:3000',
      answered: () => answered,
      say: (line) => lines.push(line),
    });
    const refused = new LoyaltyError({
      status: 0,
      code: 'network_error',
      message: 'Network error: connect ECONNREFUSED 127.0.0.1:3000',
      cause: new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }),
    });
    const notice = {
      method: 'POST',
      url: 'http://127.0.0.1:3000/members/signups',
      attempt: 1,
      maxAttempts: 4,
      delayMs: 1500,
      error: refused,
    };
    expect(decide(notice)).toBe(false);
    expect(lines).toEqual([]);
    answered = true;
    expect(decide(notice)).toBe(true);
    expect(lines).toEqual([
      'Cannot reach the API at http://127.0.0.1:3000 (ECONNREFUSED); retrying in 2 s (attempt 2 of 4)…',
    ]);
    expect(decide({ ...notice, delayMs: 980 })).toBe(true);
    expect(lines.at(-1)).toContain('retrying in 1 s (attempt 2 of 4)');
    expect(decide({ ...notice, delayMs: 420 })).toBe(true);
    expect(lines.at(-1)).toContain('retrying in 0.4 s (attempt 2 of 4)');
    // Another host: a refused connection may be a proxy between restarts; retried and said.
    expect(decide({ ...notice, url: 'https://api.example.com/tags' })).toBe(true);
  });
});
