// End to end: `--jq` on the built CLI against the real server. `loyalty api` and a list command
// print the filtered answer one result per line, a members export filters each line, and a
// mistake in the expression is a usage error before any request (nothing is created).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer({}, { worker: false });
  cli = await cliSandbox(live.url);
  for (const tag of ['jq-gold', 'jq-silver']) {
    const created = await cli.run([
      'api',
      'POST',
      '/tags',
      '-f',
      `tag=${tag}`,
      '-f',
      `external_reference=${tag}`,
      '-f',
      'brand_id=brand-acme',
    ]);
    expect(created.code, describeRun(created)).toBe(0);
  }
}, 60_000);
afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

/** The tags `GET /tags` lists for acme: its organization's, sorted. */
const acmeTags = async (): Promise<string[]> =>
  (
    await live.db.sql<{ tag: string }[]>`
      SELECT tag FROM tags WHERE organization_id = (SELECT organization_id FROM brands WHERE id = 'brand-acme')`
  )
    .map((row) => row.tag)
    .sort();

it("loyalty api GET /tags --jq '.data[].tag' prints each tag raw, one per line", async () => {
  const result = await cli.run(['api', 'GET', '/tags', '--jq', '.data[].tag']);
  expect(result.code, describeRun(result)).toBe(0);
  const lines = result.stdout.trimEnd().split('\n');
  expect(lines).toContain('jq-gold');
  expect(lines).toContain('jq-silver');
  expect([...lines].sort()).toEqual(await acmeTags());
  expect(result.stdout).not.toContain('"');
});

it('loyalty tags list --jq filters the JSON list (select, string interpolation)', async () => {
  const result = await cli.run([
    'tags',
    'list',
    '--jq',
    '.[] | select(.tag | startswith("jq-")) | "\\(.tag) \\(.brand_id)"',
  ]);
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout).toBe('jq-gold brand-acme\njq-silver brand-acme\n');
});

it('loyalty members export --jq applies the expression to each JSON line', async () => {
  for (const email of ['jq-a@example.org', 'jq-b@example.org']) {
    const created = await cli.run(['api', 'POST', '/members', '-f', `email=${email}`, '-f', 'brand_id=brand-acme']);
    expect(created.code, describeRun(created)).toBe(0);
  }
  const result = await cli.run(['members', 'export', '--jq', 'select(.email | startswith("jq-")) | .email']);
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout.trimEnd().split('\n').sort()).toEqual(['jq-a@example.org', 'jq-b@example.org']);
});

it('a mistake in the expression exits 2 naming the column, and the POST is never sent', async () => {
  const before = await acmeTags();
  const result = await cli.run([
    'api',
    'POST',
    '/tags',
    '-f',
    'tag=jq-never',
    '-f',
    'external_reference=jq-never',
    '-f',
    'brand_id=brand-acme',
    '--jq',
    '.data | map(.tag',
  ]);
  expect(result.code, describeRun(result)).toBe(2);
  expect(result.stderr).toContain('--jq: syntax error, unexpected end of file');
  expect(result.stderr).toMatch(/at column \d+:/);
  expect(result.stdout).toBe('');
  expect(await acmeTags()).toEqual(before);
});
