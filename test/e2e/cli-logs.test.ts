// End to end (issue 29 item 4): `loyalty logs tail --json` (the built binary, a real child process)
// against the real server follows the organization's request log live: it sees a request another
// client of the same organization makes, never one of another organization, and ends cleanly on
// Ctrl-C. `loyalty logs list` finds a request by its id.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { fetchToken, startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer();
  cli = await cliSandbox(live.url);
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

async function getTags(client: string, brand: string, requestId: string): Promise<number> {
  const token = await fetchToken(live.url, client);
  const res = await fetch(`${live.url}/tags?brand_id=${brand}`, {
    headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId },
  });
  await res.body?.cancel();
  return res.status;
}

it("logs tail --json prints the organization's requests as they happen, another client's included, never another organization's", async () => {
  const tail = cli.spawn(['logs', 'tail', '--json', '--wait', '5'], { timeoutMs: 60_000 });
  await tail.waitFor(/Tailing the request log of /);
  // globex first: if tail showed other organizations' requests, this line would come before acme's.
  expect(await getTags('globex-admin', 'brand-globex', 'e2e-globex')).toBe(200);
  expect(await getTags('acme-readonly', 'brand-acme', 'e2e-acme-readonly')).toBe(200);
  await tail.waitFor(/"request_id":"e2e-acme-readonly"/, { stream: 'stdout' });
  tail.child.kill('SIGINT');
  const result = await tail.exited;
  expect(result.code, describeRun(result)).toBe(130);
  expect(result.stderr).toMatch(/Stopped tailing\./);
  const lines = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const seen = lines.find((l) => l.request_id === 'e2e-acme-readonly');
  expect(seen).toMatchObject({
    method: 'GET',
    route: '/tags',
    status: 200,
    client_id: 'acme-readonly',
    error_code: null,
  });
  expect(lines.some((l) => l.request_id === 'e2e-globex')).toBe(false);
  // The CLI's own polls are not logged.
  expect(lines.every((l) => l.route !== '/request-logs')).toBe(true);
});

it('logs list finds a request by its id; a bad filter is a usage error naming the flag', async () => {
  const status = await getTags('acme-admin', 'brand-acme', 'e2e-list-one');
  let found = '';
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && !found.includes('e2e-list-one'); ) {
    const result = await cli.run(['logs', 'list', '--request-id', 'e2e-list-one']);
    expect(result.code, describeRun(result)).toBe(0);
    found = result.stdout;
  }
  expect(found).toMatch(new RegExp(`${status} {2}GET {5}/tags {2}\\d+ ms {2}e2e-list-one`));
  // --jq goes through the same door as every JSON output: one result per line, strings raw.
  const jq = await cli.run([
    'logs',
    'list',
    '--request-id',
    'e2e-list-one',
    '--jq',
    '.data[] | "\\(.status) \\(.route)"',
  ]);
  expect(jq.code, describeRun(jq)).toBe(0);
  expect(jq.stdout.trim()).toBe(`${status} /tags`);
  const bad = await cli.run(['logs', 'tail', '--status', '4x']);
  expect(bad.code, describeRun(bad)).toBe(2);
  expect(bad.stderr).toMatch(/--status 4x/);
});
