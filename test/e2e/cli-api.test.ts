// End to end: the built `loyalty api` against the real server. Any operation by method and path,
// an Idempotency-Key that makes a POST whose answer was lost run once when the SDK retries it,
// --paginate across every page of a brand's members, and an unknown path answered with the closest.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer({}, { worker: false });
  cli = await cliSandbox(live.url);
});
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

const tagsNamed = async (name: string): Promise<number> =>
  Number((await live.db.sql`SELECT count(*)::int AS n FROM tags WHERE tag = ${name}`)[0]!.n);

it('GET /tags prints the answer of the real server as JSON', async () => {
  const result = await cli.run(['api', 'GET', '/tags']);
  expect(result.code, describeRun(result)).toBe(0);
  const answer = JSON.parse(result.stdout) as { success: boolean; data: unknown[] };
  expect(answer.success).toBe(true);
  expect(Array.isArray(answer.data)).toBe(true);
  expect(result.stdout.trim().split('\n')).toHaveLength(1); // compact: stdout is a pipe
});

/**
 * A proxy to the server that forwards the first POST /tags, lets the server run it, and then cuts
 * the connection instead of answering: the CLI never sees that the tag was created.
 */
async function answerLosingProxy(
  target: string,
): Promise<{ url: string; posts: () => number; close: () => Promise<void> }> {
  let posts = 0;
  const proxy: Server = createServer((req, res) => {
    const isPost = req.method === 'POST' && req.url === '/tags';
    if (isPost) posts += 1;
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        if (isPost && posts === 1) {
          answer.resume();
          answer.on('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts: () => posts,
    close: () =>
      new Promise((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

it('POST /tags --field creates one tag when the first answer is lost and the SDK retries with the same key', async () => {
  const proxy = await answerLosingProxy(live.url);
  try {
    const result = await cli.run(
      [
        'api',
        'POST',
        '/tags',
        '-f',
        'tag=E2E Retried',
        '-f',
        'external_reference=e2e-retried',
        '-f',
        'brand_id=brand-acme',
      ],
      { env: { LOYALTY_API_URL: proxy.url } },
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(proxy.posts()).toBe(2); // the lost attempt and its retry
    expect(JSON.parse(result.stdout)).toMatchObject({ success: true, data: { tag: 'E2E Retried' } });
    expect(await tagsNamed('E2E Retried')).toBe(1);
  } finally {
    await proxy.close();
  }
});

it('POST /tags run twice with the same --header Idempotency-Key creates one tag', async () => {
  const args = [
    'api',
    'POST',
    '/tags',
    '-f',
    'tag=E2E Keyed',
    '-f',
    'external_reference=e2e-keyed',
    '-f',
    'brand_id=brand-acme',
  ];
  const key = ['-H', 'Idempotency-Key: e2e-cli-api-keyed-1'];
  const first = await cli.run([...args, ...key]);
  const second = await cli.run([...args, ...key]);
  expect(first.code, describeRun(first)).toBe(0);
  expect(second.code, describeRun(second)).toBe(0);
  expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout));
  expect(await tagsNamed('E2E Keyed')).toBe(1);
});

it('POST /members/list --paginate returns every member of a brand across pages', async () => {
  await live.db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-e2e-api', 'org-acme', 'E2E API')`;
  const users = Array.from({ length: 23 }, (_, i) => ({ email: `page-member-${i}@example.org`, first_name: `P${i}` }));
  const signup = await cli.run(['api', 'POST', '/members/signups', '--input', '-'], {
    input: JSON.stringify({ brand_id: 'brand-e2e-api', users }),
  });
  expect(signup.code, describeRun(signup)).toBe(0);

  const args = ['api', 'POST', '/members/list', '--field', 'brand_id=brand-e2e-api', '--field', 'per_page=5'];
  const first = await cli.run(args);
  expect(first.code, describeRun(first)).toBe(0);
  const onePage = JSON.parse(first.stdout) as { data: { last_page: number; members: unknown[] } };
  expect(onePage.data.members).toHaveLength(5);
  expect(onePage.data.last_page).toBe(5);

  const result = await cli.run([...args, '--paginate']);
  expect(result.code, describeRun(result)).toBe(0);
  const members = JSON.parse(result.stdout) as Array<{ email: string }>;
  expect(members.map((m) => m.email).sort()).toEqual(users.map((u) => u.email).sort());

  const lines = await cli.run([...args, '--paginate', '--jsonl']);
  expect(lines.stdout.trim().split('\n')).toHaveLength(23);
});

it('an unknown path is refused with the closest operations, and an error answer goes to stderr', async () => {
  const unknown = await cli.run(['api', 'GET', '/member/abc']);
  expect(unknown.code, describeRun(unknown)).toBe(2);
  expect(unknown.stderr).toContain('GET /member/abc is not an operation of the API.');
  expect(unknown.stderr).toContain('GET /members/{uuid}');

  const missing = await cli.run([
    'api',
    'GET',
    '/members/00000000-0000-4000-8000-000000000000',
    '-f',
    'brand_id=brand-acme',
  ]);
  expect(missing.code, describeRun(missing)).toBe(1);
  expect(missing.stdout).toBe('');
  expect(JSON.parse(missing.stderr.slice(0, missing.stderr.lastIndexOf('}') + 1))).toMatchObject({
    error: 'not_found',
  });
});

it('a path that would resolve elsewhere (backslash, TAB, %5c) is refused with exit 2: the subscription survives', async () => {
  const created = await cli.run([
    'api',
    'POST',
    '/webhook-subscriptions',
    '-f',
    'url=http://127.0.0.1:9/e2e-traversal',
    '-f',
    'events[]=member.created',
  ]);
  expect(created.code, describeRun(created)).toBe(0);
  const id = (JSON.parse(created.stdout) as { data: { id: string } }).data.id;
  const alive = async () =>
    Number((await live.db.sql`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE id = ${id}`)[0]!.n);
  expect(await alive()).toBe(1);
  for (const path of [
    `/members/..\\webhook-subscriptions\\${id}`,
    `/members/.\t.\\webhook-subscriptions\\${id}`,
    `/members/..%5cwebhook-subscriptions%5c${id}`,
  ]) {
    const result = await cli.run(['api', 'DELETE', path]);
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('The path "/members/');
    expect(result.stderr).toContain('nothing was sent');
  }
  expect(await alive()).toBe(1);
  // The path as the API has it still works.
  expect((await cli.run(['api', 'DELETE', `/webhook-subscriptions/${id}`])).code).toBe(0);
  expect(await alive()).toBe(0);
});

it('refuses a secret-named field given as a value on argv (exit 2) and takes it from stdin with -F name=@-', async () => {
  const args = ['api', 'POST', '/oauth/token', '-f', 'grant_type=client_credentials', '-f', 'client_id=acme-admin'];
  const refused = await cli.run([...args, '-f', 'client_secret=acme-admin-secret']);
  expect(refused.code, describeRun(refused)).toBe(2);
  expect(refused.stderr).toContain('process list');
  expect(refused.stderr).toContain('-F client_secret=@');
  expect(refused.stderr).not.toContain('acme-admin-secret');
  const fromStdin = await cli.run([...args, '-F', 'client_secret=@-'], { input: 'acme-admin-secret' });
  expect(fromStdin.code, describeRun(fromStdin)).toBe(0);
  expect(JSON.parse(fromStdin.stdout)).toMatchObject({ token_type: expect.stringMatching(/bearer/i) });
});
