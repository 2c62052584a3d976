// End to end: the built `loyalty` binary scores receivers over real sockets: the SDK's node:http
// receiver example run as its own process (every case passes, exit 0), and a receiver that accepts
// everything (the four bad deliveries fail, exit 3, --json).
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CliSandbox, cliSandbox, describeRun } from '#test-helpers/cli.js';
import { until } from '#test-helpers/until.js';

const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const EXAMPLE = path.resolve(import.meta.dirname, '../../sdk/examples/webhooks-node-http.mjs');

let cli: CliSandbox;
let example: ChildProcess | undefined;
let acceptAll: Server | undefined;

/** A port that was free a moment ago, for a process that takes its port from the environment. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  // The CLI needs no API for this command; the sandbox keeps its config and environment apart.
  cli = await cliSandbox('http://127.0.0.1:9');
  await writeFile(path.join(cli.dir, 'secret.txt'), `${secret}\n`, { mode: 0o600 });
});
afterAll(async () => {
  example?.kill();
  acceptAll?.close();
  await cli?.cleanup();
});

it('passes every case against the SDK node:http receiver example, run as its own process, and exits 0', async () => {
  const port = await freePort();
  example = spawn(process.execPath, [EXAMPLE], {
    env: { PATH: process.env.PATH, PORT: String(port), LOYALTY_WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}/webhooks`;
  await until(
    () =>
      fetch(url, { method: 'POST', body: '{}' }).then(
        (r) => r.status === 400,
        () => false,
      ),
    20_000,
  );

  const result = await cli.run(['webhooks', 'test-receiver', url, '--secret-file', 'secret.txt']);
  expect(result.code, describeRun(result)).toBe(0);
  const rows = result.stdout.trimEnd().split('\n').slice(1);
  expect(rows.map((row) => row.split(/\s{2,}/)[0])).toEqual([
    'valid',
    'tampered_body',
    'wrong_secret',
    'stale_timestamp',
    'missing_signature',
    'rotation',
    'duplicate',
  ]);
  for (const row of rows) expect(row).toMatch(/\s\d+\s+pass$/);
  expect(result.stdout).toContain('400 stale_timestamp');
  expect(result.stderr).toContain('All 7 cases passed.');
});

it('exits 3 for a receiver that accepts everything, with --json results naming the failed cases', async () => {
  acceptAll = createServer((req, res) => {
    req.resume().on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => acceptAll!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(acceptAll.address() as AddressInfo).port}/hooks`;

  const result = await cli.run(['webhooks', 'test-receiver', url, '--json', '--timeout', '2'], {
    env: { LOYALTY_WEBHOOK_SECRET: secret },
  });
  expect(result.code, describeRun(result)).toBe(3);
  const report = JSON.parse(result.stdout) as {
    url: string;
    passed: boolean;
    timeout_ms: number;
    cases: Array<{ case: string; passed: boolean; status: number; ms: number; hint?: string }>;
  };
  expect(report).toMatchObject({ url, passed: false, timeout_ms: 2000 });
  expect(report.cases.filter((c) => !c.passed).map((c) => c.case)).toEqual([
    'tampered_body',
    'wrong_secret',
    'stale_timestamp',
    'missing_signature',
  ]);
  for (const c of report.cases) {
    expect(c.status).toBe(200);
    expect(c.ms).toBeGreaterThanOrEqual(0);
    expect(Boolean(c.hint)).toBe(!c.passed);
  }
  expect(result.stderr).toContain('4 of 7 cases failed');
});
