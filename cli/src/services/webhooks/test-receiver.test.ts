import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { constructEvent, WebhookVerificationError } from '@loyalty/sdk/webhooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { type CaseResult, testReceiver } from './test-receiver.js';

const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const ALL = ['valid', 'tampered_body', 'wrong_secret', 'stale_timestamp', 'missing_signature', 'rotation', 'duplicate'];

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

/** A receiver on node:http: `answer` gets the raw body and headers and returns a status. */
function receiver(answer: (body: Buffer, headers: IncomingHttpHeaders) => number | Promise<number>): Promise<string> {
  return listening(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const status = await answer(Buffer.concat(chunks), req.headers);
        if (!res.destroyed) res.writeHead(status).end();
      });
    }),
  );
}

/** 204 when constructEvent accepts `body`, 400 when it does not. */
function verified(body: Buffer | string, headers: IncomingHttpHeaders): number {
  try {
    constructEvent(body, headers, secret);
    return 204;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return 400;
    throw error;
  }
}

const run = (url: string, timeoutMs = 2000) =>
  testReceiver(url, secret, { timeoutMs, signal: new AbortController().signal });
const failed = (results: CaseResult[]) => results.filter((r) => !r.passed).map((r) => r.case);

const importExample = (name: string) => import(new URL(`../../../../sdk/examples/${name}.mjs`, import.meta.url).href);

describe('test-receiver against the SDK receiver examples: every case passes', () => {
  it('node:http', async () => {
    const { createWebhookServer } = await importExample('webhooks-node-http');
    const received: string[] = [];
    const url = await listening(createWebhookServer(secret, (e: { id: string }) => received.push(e.id)));
    const results = await run(url);
    expect(failed(results), JSON.stringify(results, null, 2)).toEqual([]);
    expect(results.map((r) => r.case)).toEqual(ALL);
    // valid, rotation and the duplicate twice: the example hands the repeat to its handler (it de-duplicates)
    expect(received).toHaveLength(4);
    expect(new Set(received).size).toBe(3);
  });

  it('hapi', async () => {
    const { createWebhookServer } = await importExample('webhooks-hapi');
    const server = createWebhookServer(secret, () => {}, { port: 0 });
    await server.start();
    onTestFinished(() => server.stop());
    const results = await run(`${server.info.uri}/webhooks`);
    expect(failed(results), JSON.stringify(results, null, 2)).toEqual([]);
  });

  it('Express', async () => {
    const { createWebhookApp } = await importExample('webhooks-express');
    const server: Server = createWebhookApp(secret, () => {}).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const results = await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
    expect(failed(results), JSON.stringify(results, null, 2)).toEqual([]);
  });
});

describe('test-receiver against broken receivers: each fails exactly its cases', () => {
  it('one that accepts everything fails tampered_body, wrong_secret, stale_timestamp and missing_signature', async () => {
    const results = await run(await receiver(() => 204));
    expect(failed(results)).toEqual(['tampered_body', 'wrong_secret', 'stale_timestamp', 'missing_signature']);
    expect(results.find((r) => r.case === 'stale_timestamp')?.hint).toContain('more than 5 minutes from now');
    expect(results.find((r) => r.case === 'missing_signature')).toMatchObject({ status: 204, passed: false });
  });

  it('one that verifies re-serialized JSON fails every case that needs a 2xx: valid, rotation, duplicate', async () => {
    const results = await run(
      await receiver((body, headers) => verified(JSON.stringify(JSON.parse(body.toString()), null, 2), headers)),
    );
    expect(failed(results)).toEqual(['valid', 'rotation', 'duplicate']);
    expect(results[0]?.hint).toContain('loyalty webhooks verify --explain');
    expect(results.at(-1)?.hint).toBe('Answered like the valid delivery (400): fix that case first.');
  });

  it('one that checks only the first signature entry fails rotation', async () => {
    const results = await run(
      await receiver((body, headers) =>
        verified(body, { ...headers, 'webhook-signature': String(headers['webhook-signature']).split(' ')[0] }),
      ),
    );
    expect(failed(results)).toEqual(['rotation']);
    expect(results.find((r) => r.case === 'rotation')?.hint).toContain('accept when any entry matches');
  });

  it('one that is slow to acknowledge fails on the timeout (valid, rotation, duplicate), with the time', async () => {
    const results = await run(
      await receiver(async (body, headers) => {
        const status = verified(body, headers);
        if (status === 204) await new Promise((resolve) => setTimeout(resolve, 2500));
        return status;
      }),
      1000,
    );
    expect(failed(results)).toEqual(['valid', 'rotation', 'duplicate']);
    expect(results[0]).toMatchObject({ status: null, answer: 'no answer within 1000 ms' });
    expect(results[0]?.ms).toBeGreaterThanOrEqual(990);
    expect(results[0]?.hint).toContain('acknowledge first');
    expect(results.at(-1)?.hint).toBe(
      'Answered like the valid delivery (no answer within 1000 ms): fix that case first.',
    );
  });

  it('one that answers 500 to a repeated webhook-id fails duplicate', async () => {
    const seen = new Set<string>();
    const results = await run(
      await receiver((body, headers) => {
        const status = verified(body, headers);
        if (status !== 204) return status;
        const id = String(headers['webhook-id']);
        if (seen.has(id)) return 500;
        seen.add(id);
        return 204;
      }),
    );
    expect(failed(results)).toEqual(['duplicate']);
    expect(results.at(-1)).toMatchObject({ status: 500 });
    expect(results.at(-1)?.hint).toContain('de-duplicate on webhook-id');
  });

  it('one that answers 5xx instead of 4xx to bad deliveries fails those, told that 5xx is retried', async () => {
    const results = await run(await receiver((body, headers) => (verified(body, headers) === 204 ? 204 : 503)));
    expect(failed(results)).toEqual(['tampered_body', 'wrong_secret', 'stale_timestamp', 'missing_signature']);
    expect(results[1]?.hint).toContain('503 makes the server retry it');
  });

  it('does not follow a redirect: a 3xx fails its case and the target gets nothing', async () => {
    let reached = 0;
    const target = await receiver(() => {
      reached++;
      return 204;
    });
    const results = await run(
      await listening(createServer((_req, res) => res.writeHead(307, { location: target }).end())),
    );
    expect(failed(results)).toEqual(ALL);
    expect(reached).toBe(0);
    expect(results[0]?.hint).toContain(`It answered a redirect (307 to ${target})`);
  });
});

describe('loyalty webhooks test-receiver (in process)', () => {
  it('prints the table, the hints of failed cases, and exits 3; --json gives the results', async () => {
    const url = await receiver(() => 204);
    const cwd = await tempConfigHome();
    await writeFile(join(cwd, 'secret.txt'), `${secret}\n`);
    const result = await runCli(['webhooks', 'test-receiver', url, '--secret-file', 'secret.txt'], { cwd });
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^CASE +SENDS +EXPECTS +GOT +MS +RESULT\n/);
    expect(result.stdout).toMatch(/\nvalid +a correctly signed delivery +2xx +204 +\d+ +pass\n/);
    expect(result.stdout).toContain('✖ tampered_body: It accepted a body that was changed after signing');
    expect(result.stderr).toContain(
      '4 of 7 cases failed: tampered_body, wrong_secret, stale_timestamp, missing_signature.',
    );
    const json = await runCli(['webhooks', 'test-receiver', url, '--json'], {
      env: { LOYALTY_WEBHOOK_SECRET: secret },
    });
    expect(json.code).toBe(3);
    const report = JSON.parse(json.stdout) as { passed: boolean; timeout_ms: number; cases: CaseResult[] };
    expect(report).toMatchObject({ passed: false, timeout_ms: 5000 });
    expect(report.cases.map((c) => [c.case, c.passed])).toEqual(
      ALL.map((c) => [c, !['tampered_body', 'wrong_secret', 'stale_timestamp', 'missing_signature'].includes(c)]),
    );
  });

  it('exits 1 when nothing answers at the URL', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const closed = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    await new Promise((resolve) => server.close(resolve));
    const result = await runCli(['webhooks', 'test-receiver', closed], { env: { LOYALTY_WEBHOOK_SECRET: secret } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Cannot reach ${closed}: ECONNREFUSED.`);
  });

  it('refuses a bad URL, timeout or secret, and the secret as a flag value, with exit 2', async () => {
    const env = { LOYALTY_WEBHOOK_SECRET: secret };
    for (const [args, message] of [
      [['ftp://x/hooks'], '<url> must be an http(s) URL'],
      [['http://127.0.0.1:1/', '--timeout', '0'], '--timeout must be a positive number of seconds.'],
      [['http://127.0.0.1:1/', '--timeout', 'soon'], '--timeout must be a positive number of seconds.'],
      [['http://127.0.0.1:1/', '--secret', secret], '--secret does not take the signing secret as a value'],
    ] as const) {
      const result = await runCli(['webhooks', 'test-receiver', ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
    const none = await runCli(['webhooks', 'test-receiver', 'http://127.0.0.1:1/']);
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('No secret given.')]);
    const notWhsec = await runCli(['webhooks', 'test-receiver', 'http://127.0.0.1:1/'], {
      env: { LOYALTY_WEBHOOK_SECRET: 'hunter2' },
    });
    expect([notWhsec.code, notWhsec.stderr]).toEqual([2, expect.stringContaining('not a webhook secret')]);
  });

  it('documents the cases and duplicates in --help', async () => {
    const help = await runCli(['webhooks', 'test-receiver', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('only the receiver knows whether it processed the event twice');
    expect(help.stdout).toContain('sdk/examples/webhooks-*.mjs');
    expect(help.stdout).toContain('--timeout <seconds>');
  });
});
