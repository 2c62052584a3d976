import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signPayload } from '@loyalty/sdk/webhooks';
import { describe, expect, it } from 'vitest';
import { runCli, tempConfigHome } from '../testing/run-cli.js';
import { parseHeaders } from './verify.js';

interface Vector { name: string; secrets: string[]; body: string; headers: Record<string, string> }
const vectors = JSON.parse(await readFile(new URL('../../../fixtures/webhook-vectors.json', import.meta.url), 'utf8')) as { vectors: Vector[] };
const vector = vectors.vectors[0]!;
const secret = vector.secrets[0]!;

async function capture(files: Record<string, string>): Promise<string> {
  const dir = await tempConfigHome();
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

describe('loyalty webhooks verify', () => {
  it('accepts the published test vector (Loyalty-Signature and webhook-signature)', async () => {
    const cwd = await capture({ 'body.json': vector.body, 'headers.json': JSON.stringify(vector.headers) });
    const result = await runCli(['webhooks', 'verify', 'body.json', '--secret', secret, '--headers-file', 'headers.json', '--tolerance', '1000000000'], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('✔ Loyalty-Signature: valid\n✔ webhook-signature: valid\n');
  });

  it('checks just Loyalty-Signature with --signature, reading the body from stdin', async () => {
    const result = await runCli(['webhooks', 'verify', '--secret', secret, '--signature', vector.headers['Loyalty-Signature']!], { stdin: vector.body });
    expect(result.code).toBe(0);
  });

  it('exits 1 and says "body changed or wrong secret" for a changed body, and notices an added newline', async () => {
    const cwd = await capture({ 'body.json': vector.body + '\n' });
    const result = await runCli(['webhooks', 'verify', 'body.json', '--secret', secret, '--signature', vector.headers['Loyalty-Signature']!], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('✖ Loyalty-Signature: invalid — the body was changed or the secret is wrong\n');
    expect(result.stderr).toContain('The delivery does not verify: the body was changed or the secret is wrong.');
    expect(result.stderr).toContain('ends with a newline');
  });

  it('exits 1 for a wrong secret, reported as JSON with --json', async () => {
    const result = await runCli(['webhooks', 'verify', '--json', '--secret', 'whsec_' + Buffer.from('other').toString('base64'), '--signature', vector.headers['Loyalty-Signature']!], { stdin: vector.body });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ valid: false, checks: [expect.objectContaining({ header: 'Loyalty-Signature', valid: false, reason: 'signature_mismatch' })] });
  });

  it('exits 1 with "stale timestamp" for an old delivery, from raw captured headers and a secret file', async () => {
    const body = '{"id":"e1","type":"member.created","created_at":"2026-01-01T00:00:00.000Z","organization_id":"org-acme","data":{}}';
    const headers = signPayload({ body, secret, timestamp: Math.floor(Date.now() / 1000) - 3600 });
    const raw = ['POST /webhooks HTTP/1.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', body].join('\r\n');
    const cwd = await capture({ 'body.json': body, 'request.txt': raw, 'secret.txt': `${secret}\n` });
    const stale = await runCli(['webhooks', 'verify', 'body.json', '--secret-file', 'secret.txt', '--headers-file', 'request.txt'], { cwd });
    expect(stale.code).toBe(1);
    expect(stale.stdout).toContain('✖ webhook-signature: invalid — stale timestamp');
    expect(stale.stderr).toContain('3600 s old (tolerance 300 s)');
    const widened = await runCli(['webhooks', 'verify', 'body.json', '--secret-file', 'secret.txt', '--headers-file', 'request.txt', '--tolerance', '7200'], { cwd });
    expect(widened.code).toBe(0);
  });

  it('takes the secret from LOYALTY_WEBHOOK_SECRET and needs one of --signature and --headers-file', async () => {
    const env = { LOYALTY_WEBHOOK_SECRET: secret };
    expect((await runCli(['webhooks', 'verify', '--signature', vector.headers['Loyalty-Signature']!], { env, stdin: vector.body })).code).toBe(0);
    const neither = await runCli(['webhooks', 'verify'], { env, stdin: vector.body });
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('Pass exactly one of --signature and --headers-file.');
    const noSecret = await runCli(['webhooks', 'verify', '--signature', 'ab'], { stdin: vector.body });
    expect(noSecret.code).toBe(2);
  });
});

describe('parseHeaders', () => {
  it('reads JSON objects and "Name: value" lines, case-insensitively, stopping at the body', () => {
    expect(parseHeaders('{"Webhook-Id":"a","x":["1","2"]}')).toEqual({ 'webhook-id': 'a', x: '1 2' });
    expect(parseHeaders('POST /x HTTP/1.1\nLoyalty-Signature: abc\nwebhook-id: i:d\n\n{"id":1}')).toEqual({ 'loyalty-signature': 'abc', 'webhook-id': 'i:d' });
  });
});
