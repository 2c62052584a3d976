import { Writable } from 'node:stream';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API, fakeApi, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

/** The fake API, answering every request with the X-Request-Id it was sent, like the server. */
function echoingApi() {
  const sent: string[] = [];
  const api = fakeApi();
  server.resetHandlers(
    ...api.handlers.map((handler) =>
      http.all(`${API}/*`, async ({ request, requestId }) => {
        const result = await handler.run({ request, requestId });
        const response = result?.response;
        if (!response) return undefined; // not this handler's request
        const id = request.headers.get('x-request-id') ?? '';
        sent.push(id);
        response.headers.set('x-request-id', id);
        return response;
      }),
    ),
  );
  return sent;
}

const generated = /^[0-9a-f-]{36}-\d+$/;

describe('request ids', { timeout: 20_000 }, () => {
  beforeEach(() => server.resetHandlers(...fakeApi().handlers));

  it('--debug prints method, path, status and request id of each request to stderr, never a token', async () => {
    const sent = echoingApi();
    const env = loggedInEnv(await tempConfigHome());
    const result = await runCli(['tags', 'list', '--debug'], { env });
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('[debug]'));
    expect(sent).toHaveLength(2);
    expect(sent.every((id) => generated.test(id))).toBe(true);
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^\\[debug\\] POST /oauth/token -> 200 \\(request id: ${sent[0]}, \\d+ ms\\)$`)),
      expect.stringMatching(new RegExp(`^\\[debug\\] GET /tags -> 200 \\(request id: ${sent[1]}, \\d+ ms\\)$`)),
    ]);
    expect(result.stderr).not.toMatch(/token-acme-admin|acme-admin-secret|Bearer/);
    expect(result.stdout).not.toContain('[debug]');
    // Without --debug: nothing of it.
    const quiet = await runCli(['tags', 'list'], { env });
    expect(quiet.stderr).toBe('');
  });

  it('--debug shows a request that got no response', async () => {
    server.use(http.get(`${API}/tags`, () => HttpResponse.error()));
    const result = await runCli(['tags', 'list', '--debug'], {
      env: loggedInEnv(await tempConfigHome(), { LOYALTY_TOKEN: 'tok' }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\[debug\] GET \/tags -> no response: .* \(request id: [0-9a-f-]{36}-1, \d+ ms\)/);
    expect(result.stderr).not.toContain('tok\n');
  });

  it('ends an API error message with the request id the server answered with', async () => {
    const sent = echoingApi();
    const result = await runCli(['members', 'get', 'nobody@example.com'], { env: loggedInEnv(await tempConfigHome()) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`✖ Member not found (404). (request id: ${sent.at(-1)})\n`);
  });

  it('quotes the body’s request_id of a 5XX (a server that sent no header)', async () => {
    server.use(
      http.get(`${API}/tags`, () =>
        HttpResponse.json(
          { message: 'Internal Server Error', error: 'server_error', request_id: 'srv-42' },
          { status: 500 },
        ),
      ),
    );
    const result = await runCli(['tags', 'list'], {
      env: loggedInEnv(await tempConfigHome(), { LOYALTY_TOKEN: 'tok' }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('✖ The API failed (500): Internal Server Error (request id: srv-42)\n');
  });

  it('quotes the latest request id in an unexpected error', async () => {
    server.use(
      http.get(`${API}/tags`, ({ request }) =>
        HttpResponse.json(
          { success: true, data: 'not-a-list' },
          { headers: { 'x-request-id': `${request.headers.get('x-request-id')}` } },
        ),
      ),
    );
    const result = await runCli(['tags', 'list'], {
      env: loggedInEnv(await tempConfigHome(), { LOYALTY_TOKEN: 'tok' }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^✖ Unexpected error: .* \(request id: [0-9a-f-]{36}-1\)\n/);
    expect(result.stderr).toContain('This is a bug in loyalty');
  });

  it('says nothing of a request id when no request was made', async () => {
    const { reportError } = await import('./main.js');
    const { Output } = await import('./output.js');
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    });
    reportError(new TypeError('boom'), new Output({ stdout: stream, stderr: stream, color: false }), false);
    expect(text).toMatch(/^✖ Unexpected error: boom\n/);
    text = '';
    reportError(
      new TypeError('boom'),
      new Output({ stdout: stream, stderr: stream, color: false }),
      false,
      undefined,
      'abc-1',
    );
    expect(text).toMatch(/^✖ Unexpected error: boom \(request id: abc-1\)\n/);
  });
});
