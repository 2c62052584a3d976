import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signPayload } from '@loyalty/sdk/webhooks';
import { describe, expect, it } from 'vitest';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { parseHeaders } from './verify.js';

interface Vector {
  name: string;
  secrets: string[];
  body: string;
  headers: Record<string, string>;
}
const vectors = JSON.parse(
  await readFile(new URL('../../../../fixtures/webhook-vectors.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };
const vector = vectors.vectors[0]!;
const secret = vector.secrets[0]!;

async function capture(files: Record<string, string>): Promise<string> {
  const dir = await tempConfigHome();
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

/** `loyalty webhooks verify body.json` and `flags` (words at spaces, then `more`), in `cwd` (a directory from `capture`). */
const verifyIn = (cwd: string, flags: string, ...more: string[]) =>
  runCli(['webhooks', 'verify', 'body.json', ...flags.split(' '), ...more], { cwd });

describe('loyalty webhooks verify', () => {
  it('accepts the published test vector (Loyalty-Signature and webhook-signature)', async () => {
    const cwd = await capture({
      'body.json': vector.body,
      'headers.json': JSON.stringify(vector.headers),
      'secret.txt': secret,
    });
    const result = await verifyIn(cwd, '--secret-file secret.txt --headers-file headers.json --tolerance 1000000000');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('✔ Loyalty-Signature: valid\n✔ webhook-signature: valid\n');
  });

  it('checks just Loyalty-Signature with --signature, reading the body from stdin', async () => {
    const result = await runCli(['webhooks', 'verify', '--signature', vector.headers['Loyalty-Signature']!], {
      stdin: vector.body,
      env: { LOYALTY_WEBHOOK_SECRET: secret },
    });
    expect(result.code).toBe(0);
  });

  it('exits 1 and says "body changed or wrong secret" for a changed body, and notices an added newline', async () => {
    const cwd = await capture({ 'body.json': `${vector.body}\n`, 'secret.txt': secret });
    const result = await verifyIn(cwd, '--secret-file secret.txt --signature', vector.headers['Loyalty-Signature']!);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('✖ Loyalty-Signature: invalid — the body was changed or the secret is wrong\n');
    expect(result.stderr).toContain('The delivery does not verify: the body was changed or the secret is wrong.');
    expect(result.stderr).toContain('ends with a newline');
  });

  it('exits 1 for a wrong secret, reported as JSON with --json', async () => {
    const env = { LOYALTY_WEBHOOK_SECRET: `whsec_${Buffer.from('other').toString('base64')}` };
    const result = await runCli(['webhooks', 'verify', '--json', '--signature', vector.headers['Loyalty-Signature']!], {
      stdin: vector.body,
      env,
    });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      valid: false,
      checks: [expect.objectContaining({ header: 'Loyalty-Signature', valid: false, reason: 'signature_mismatch' })],
    });
  });

  it('exits 1 with "stale timestamp" for an old delivery, from raw captured headers and a secret file', async () => {
    const body =
      '{"id":"e1","type":"member.created","created_at":"2026-01-01T00:00:00.000Z","organization_id":"org-acme","data":{}}';
    const headers = signPayload({ body, secret, timestamp: Math.floor(Date.now() / 1000) - 3600 });
    const raw = [
      'POST /webhooks HTTP/1.1',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      '',
      body,
    ].join('\r\n');
    const cwd = await capture({ 'body.json': body, 'request.txt': raw, 'secret.txt': `${secret}\n` });
    const stale = await verifyIn(cwd, '--secret-file secret.txt --headers-file request.txt');
    expect(stale.code).toBe(1);
    expect(stale.stdout).toContain('✖ webhook-signature: invalid — stale timestamp');
    // Signed 3,600 s ago; a second may pass before the CLI reads its clock on a busy machine.
    expect(stale.stderr).toMatch(/ 360[01] s old \(tolerance 300 s\)/);
    const widened = await verifyIn(cwd, '--secret-file secret.txt --headers-file request.txt --tolerance 7200');
    expect(widened.code).toBe(0);
  });

  it('takes the secret from LOYALTY_WEBHOOK_SECRET and needs one of --signature and --headers-file', async () => {
    const env = { LOYALTY_WEBHOOK_SECRET: secret };
    expect(
      (
        await runCli(['webhooks', 'verify', '--signature', vector.headers['Loyalty-Signature']!], {
          env,
          stdin: vector.body,
        })
      ).code,
    ).toBe(0);
    const neither = await runCli(['webhooks', 'verify'], { env, stdin: vector.body });
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('Pass exactly one of --signature and --headers-file.');
    const noSecret = await runCli(['webhooks', 'verify', '--signature', 'ab'], { stdin: vector.body });
    expect(noSecret.code).toBe(2);
  });
});

describe('loyalty webhooks verify: the secret never on argv', () => {
  const signature = vector.headers['Loyalty-Signature']!;

  it('refuses the secret as a flag value with exit 2, says why, names the alternatives and does not echo it', async () => {
    for (const args of [['--secret', secret], [`--secret=${secret}`], ['--secret']]) {
      const result = await runCli(['webhooks', 'verify', ...args, '--signature', signature], { stdin: vector.body });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr, args.join(' ')).toContain('process list');
      for (const way of ['--secret-file <path>', '--secret-stdin', 'LOYALTY_WEBHOOK_SECRET'])
        expect(result.stderr).toContain(way);
      expect(result.stderr).not.toContain(secret.slice('whsec_'.length));
    }
  });

  it('refuses it even when a valid secret comes from elsewhere too, so scripts get fixed', async () => {
    const result = await runCli(['webhooks', 'verify', '--secret', secret, '--signature', signature], {
      stdin: vector.body,
      env: { LOYALTY_WEBHOOK_SECRET: secret },
    });
    expect(result.code).toBe(2);
  });

  it('reads the secret from stdin with --secret-stdin, and with --secret-file -', async () => {
    const cwd = await capture({ 'body.json': vector.body });
    for (const flags of [['--secret-stdin'], ['--secret-file', '-']]) {
      const result = await runCli(['webhooks', 'verify', 'body.json', ...flags, '--signature', signature], {
        cwd,
        stdin: `${secret}\n`,
      });
      expect(result.code, `${flags.join(' ')}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toBe('✔ Loyalty-Signature: valid\n');
    }
  });

  it('refuses to read both the secret and the body (or headers) from stdin', async () => {
    const bodyToo = await runCli(['webhooks', 'verify', '--secret-stdin', '--signature', signature], { stdin: secret });
    expect(bodyToo.code).toBe(2);
    expect(bodyToo.stderr).toContain('stdin cannot hold both the secret and the body');
    const cwd = await capture({ 'body.json': vector.body });
    const headersToo = await runCli(['webhooks', 'verify', 'body.json', '--secret-file', '-', '--headers-file', '-'], {
      cwd,
      stdin: secret,
    });
    expect(headersToo.code).toBe(2);
    expect(headersToo.stderr).toContain('stdin cannot hold both the secret and the headers');
  });

  it('prefers secrets from files and stdin over LOYALTY_WEBHOOK_SECRET', async () => {
    const cwd = await capture({ 'body.json': vector.body, 'secret.txt': secret });
    const env = { LOYALTY_WEBHOOK_SECRET: `whsec_${Buffer.from('other').toString('base64')}` };
    expect(
      (
        await runCli(['webhooks', 'verify', 'body.json', '--secret-file', 'secret.txt', '--signature', signature], {
          cwd,
          env,
        })
      ).code,
    ).toBe(0);
  });

  it('takes both secrets of a rotation: --secret-file twice, or one secret per line', async () => {
    const rotation = vectors.vectors.find((v) => v.secrets.length === 2)!;
    const [newest, previous] = rotation.secrets as [string, string];
    // A delivery signed with the previous secret only still verifies while both are given.
    const headers = signPayload({ body: rotation.body, secret: previous, timestamp: Math.floor(Date.now() / 1000) });
    const cwd = await capture({
      'body.json': rotation.body,
      'new.txt': `${newest}\n`,
      'old.txt': previous,
      'both.txt': `${newest}\n\n${previous}\n`,
      'headers.json': JSON.stringify(headers),
    });
    const onlyNew = await verifyIn(cwd, '--secret-file new.txt --headers-file headers.json');
    expect(onlyNew.code).toBe(1);
    const twoFiles = await verifyIn(cwd, '--secret-file new.txt --secret-file old.txt --headers-file headers.json');
    expect(twoFiles.code, twoFiles.stderr).toBe(0);
    const oneFile = await verifyIn(cwd, '--secret-file both.txt --headers-file headers.json');
    expect(oneFile.code, oneFile.stderr).toBe(0);
    const piped = await runCli(
      ['webhooks', 'verify', 'body.json', '--secret-stdin', '--headers-file', 'headers.json'],
      { cwd, stdin: `${newest}\n${previous}\n` },
    );
    expect(piped.code, piped.stderr).toBe(0);
  });

  it('says when a secret file is empty or missing, without a stack', async () => {
    const cwd = await capture({ 'body.json': vector.body, 'empty.txt': '\n' });
    const empty = await verifyIn(cwd, '--secret-file empty.txt --signature', signature);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--secret-file empty.txt is empty');
    const missing = await verifyIn(cwd, '--secret-file nope.txt --signature', signature);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Cannot read --secret-file nope.txt: ENOENT');
  });

  it('explains in --help where the secret comes from', async () => {
    const help = await runCli(['webhooks', 'verify', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--secret-file <path>');
    expect(help.stdout).toContain('--secret-stdin');
    expect(help.stdout).toContain('LOYALTY_WEBHOOK_SECRET');
    expect(help.stdout).toMatch(/never taken as a flag value/);
    expect(help.stdout).not.toMatch(/--secret <whsec>/);
  });
});

describe('parseHeaders', () => {
  it('reads JSON objects and "Name: value" lines, case-insensitively, stopping at the body', () => {
    expect(parseHeaders('{"Webhook-Id":"a","x":["1","2"]}')).toEqual({ 'webhook-id': 'a', x: '1 2' });
    expect(parseHeaders('POST /x HTTP/1.1\nLoyalty-Signature: abc\nwebhook-id: i:d\n\n{"id":1}')).toEqual({
      'loyalty-signature': 'abc',
      'webhook-id': 'i:d',
    });
  });
});

describe('loyalty webhooks verify --explain', () => {
  it('names the mistake under the failed check, with its fix, and exits 1', async () => {
    const cwd = await capture({
      'body.json': `${JSON.stringify(JSON.parse(vector.body), null, 2)}\n`,
      'secret.txt': secret,
    });
    const result = await verifyIn(
      cwd,
      '--secret-file secret.txt --explain --signature',
      vector.headers['Loyalty-Signature']!,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '✖ Loyalty-Signature: invalid — the body was changed or the secret is wrong\n  → The body was re-serialized from parsed JSON',
    );
    expect(result.stdout).toContain('    fix: Verify the raw request bytes before parsing');
    expect(result.stderr).toContain('The likely mistake and its fix are under each failed check above.');
  });

  it('tries secrets from --previous-secret-file, and reports the explanation with --json', async () => {
    const rotation = vectors.vectors.find((v) => v.secrets.length === 2)!;
    const [newest, old] = rotation.secrets as [string, string];
    const headers = signPayload({ body: rotation.body, secret: old, timestamp: Math.floor(Date.now() / 1000) });
    const cwd = await capture({
      'body.json': rotation.body,
      'new.txt': newest,
      'old.txt': old,
      'headers.json': JSON.stringify(headers),
    });
    const result = await verifyIn(
      cwd,
      '--json --secret-file new.txt --previous-secret-file old.txt --headers-file headers.json --explain',
    );
    expect(result.code).toBe(1);
    const checks = (JSON.parse(result.stdout) as { checks: Array<{ explanation: { mistakes: { id: string }[] } }> })
      .checks;
    expect(checks.map((c) => c.explanation.mistakes.map((m) => m.id))).toEqual([
      ['previous_secret'],
      ['previous_secret'],
    ]);
  });

  it('says plainly when no usual mistake matches, and what it tried', async () => {
    const cwd = await capture({
      'body.json': vector.body,
      'other.txt': `whsec_${Buffer.from('other').toString('base64')}`,
    });
    const result = await verifyIn(
      cwd,
      '--secret-file other.txt --explain --signature',
      vector.headers['Loyalty-Signature']!,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('  → No usual mistake explains it');
    expect(result.stdout).toMatch(/ {4}tried: the body as given; .*the secret without "whsec_"/);
  });

  it('prints just "valid" for a correct signature', async () => {
    const cwd = await capture({ 'body.json': vector.body, 'secret.txt': secret });
    const result = await verifyIn(
      cwd,
      '--secret-file secret.txt --explain --signature',
      vector.headers['Loyalty-Signature']!,
    );
    expect(result).toMatchObject({ code: 0, stdout: '✔ Loyalty-Signature: valid\n' });
  });

  it('refuses --previous-secret-file without --explain', async () => {
    const cwd = await capture({ 'body.json': vector.body, 'secret.txt': secret });
    const result = await verifyIn(cwd, '--secret-file secret.txt --previous-secret-file secret.txt --signature ab');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--previous-secret-file is only read with --explain.');
    const bothStdin = await runCli(
      [
        'webhooks',
        'verify',
        'body.json',
        '--explain',
        '--secret-stdin',
        '--previous-secret-file',
        '-',
        '--signature',
        'ab',
      ],
      { cwd, stdin: secret },
    );
    expect(bothStdin.code).toBe(2);
    expect(bothStdin.stderr).toContain('stdin cannot hold both the secret and the previous secret.');
  });
});
