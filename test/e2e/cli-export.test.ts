// End to end: `loyalty members export` and the SDK's streamMembers against the real server. The
// streamed list (the default) gives the same members, and byte for byte the same CSV and JSON
// Lines, as the paged path; a connection cut mid-list fails the export instead of ending it short.
import { readFile } from 'node:fs/promises';
import { createServer, type Server, connect } from 'node:net';
import path from 'node:path';
import { createLoyaltyClient, importSignups, iterateMembers, streamMembers, type LoyaltyClient } from '@loyalty/sdk';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, describeRun, type CliSandbox } from '#test-helpers/cli.js';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const brandId = 'brand-acme';
const MEMBERS = 4500;

let live: LiveServer;
let client: LoyaltyClient;
let cli: CliSandbox;

beforeAll(async () => {
  live = await startLiveServer();
  client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
  });
  // Names with what a scanner of the body must get right: quotes, backslashes, brackets, non-ASCII.
  const users = Array.from({ length: MEMBERS }, (_, i) => ({
    email: `export-${i}@example.org`,
    first_name: i % 3 === 0 ? `Zoë "${i}" {[` : `First${i}`,
    last_name: i % 5 === 0 ? `O'Brien \\ ]}, 名前 🎉` : `Last${i}`,
    unsubscribed: i % 7 === 0,
  }));
  const reports = await importSignups(client, { brandId, users });
  expect(reports.every((r) => r.ok)).toBe(true);
  cli = await cliSandbox(live.url);
}, 120_000);

afterAll(async () => {
  await cli?.cleanup();
  await live?.close();
});

it('streamMembers yields the same members, in the same order, as the paged list', async () => {
  const stream = streamMembers(client, { brandId });
  const streamed = [];
  for await (const member of stream) streamed.push(member);
  const paged = [];
  for await (const member of iterateMembers(client, { brandId, perPage: 1000 })) paged.push(member);
  expect(paged).toHaveLength(MEMBERS);
  expect(stream.total).toBe(MEMBERS);
  expect(streamed).toEqual(paged);
  expect(streamed.filter((m) => m.full_name?.includes('"')).length).toBe(MEMBERS / 3);
});

it('loyalty members export writes the same CSV and JSON Lines streamed as page by page', async () => {
  for (const [format, name] of [
    ['csv', 'members'],
    ['jsonl', 'members'],
  ] as const) {
    const streamed = await cli.run(['members', 'export', '--format', format, '-o', `${name}-streamed.${format}`]);
    expect(streamed.code, describeRun(streamed)).toBe(0);
    expect(streamed.stderr).toContain(
      `Exported 4,500 members of brand-acme to ${name}-streamed.${format} (${format}).`,
    );
    const paged = await cli.run([
      'members',
      'export',
      '--format',
      format,
      '--per-page',
      '1000',
      '-o',
      `paged.${format}`,
    ]);
    expect(paged.code, describeRun(paged)).toBe(0);
    const text = await readFile(path.join(cli.dir, `${name}-streamed.${format}`), 'utf8');
    expect(text).toBe(await readFile(path.join(cli.dir, `paged.${format}`), 'utf8'));
    if (format === 'csv') {
      const rows = parse(text) as string[][];
      expect(rows).toHaveLength(MEMBERS + 1);
      expect(rows.some((row) => row.includes(`O'Brien \\ ]}, 名前 🎉`))).toBe(true);
    } else expect(text.trim().split('\n')).toHaveLength(MEMBERS);
  }
});

/** A TCP proxy to the server that cuts every connection once it has passed `limit` bytes of response. */
async function cuttingProxy(target: string, limit: number): Promise<{ url: string; server: Server }> {
  const { hostname, port } = new URL(target);
  const server = createServer((downstream) => {
    const upstream = connect(Number(port), hostname);
    let passed = 0;
    downstream.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      passed += chunk.length;
      if (passed > limit) {
        downstream.destroy();
        upstream.destroy();
      } else downstream.write(chunk);
    });
    upstream.on('error', () => downstream.destroy());
    downstream.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the proxy has no address');
  return { url: `http://127.0.0.1:${address.port}`, server };
}

it('a connection cut mid-list fails the export (exit 1, how far it got), never a quiet short file', async () => {
  // The list comes gzipped: cut it early, after 20 KB.
  const proxy = await cuttingProxy(live.url, 20_000);
  try {
    const result = await cli.run(['members', 'export', '-o', 'cut.csv'], { env: { LOYALTY_API_URL: proxy.url } });
    expect(result.code, describeRun(result)).toBe(1);
    // Where it is cut depends on how the gzip stream was flushed: maybe before the list's total.
    expect(result.stderr).toMatch(/✖ Export stopped after [\d,]+( of 4,500)? members\. The member list was cut short/);
    expect(result.stderr).toContain('The file is incomplete.');
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stderr).not.toContain('Exported');
  } finally {
    proxy.server.close();
  }
});
