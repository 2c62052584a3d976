import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPkpass } from '#test-helpers/pkpass-check.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { loadConfig } from '../../config.js';
import type { WalletConfig } from '../../config-wallet.js';
import { loadAppleSigning, SANDBOX_SIGNING_DIR } from './apple-signing.js';

// The signing material: the sandbox's CA made once per data directory however many processes
// start at once, and the operator's certificates (here from a CA this test makes with openssl),
// checked before they sign and used for real by GET /wallet/{code}.pkpass.

const run = promisify(execFile);
const wallet = (apple: WalletConfig['apple']): WalletConfig => ({ ...loadConfig({}).wallet, apple });
const sandbox = (dataDir: string) => ({ dataDir, wallet: wallet(undefined) });

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'apple-signing-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

describe('the sandbox CA', () => {
  it('is made once when processes start at once, kept 0600, and read again by a later start', async () => {
    const dataDir = path.join(tmp, 'race');
    // Two other processes (the built module, as `npm start` runs it) and loads in this one, all at
    // once, some a moment later: a load whose first read finds nothing while another's directory is
    // renamed into place must read it (CI once saw "lacks ca.pem, …" there).
    const module = path.resolve(import.meta.dirname, '../../../dist/services/wallet/apple-signing.js');
    const script = `import(${JSON.stringify(module)}).then(async (m) => process.stdout.write((await m.sandboxCertificates(${JSON.stringify(dataDir)})).caCert))`;
    const cas = await Promise.all([
      ...[1, 2].map(async () => (await run(process.execPath, ['-e', script])).stdout),
      ...[0, 0, 5, 20, 50, 100].map(async (ms) => {
        await new Promise((r) => setTimeout(r, ms));
        return (await loadAppleSigning(sandbox(dataDir))).sandboxCa;
      }),
    ]);
    expect(new Set(cas).size).toBe(1);
    const dir = path.join(dataDir, SANDBOX_SIGNING_DIR);
    expect(await readFile(path.join(dir, 'ca.pem'), 'utf8')).toBe(cas[0]);
    // No temporary directory is left behind by the losers.
    expect(await readdir(path.dirname(dir))).toEqual(['apple-sandbox']);

    await chmod(path.join(dir, 'pass-key.pem'), 0o644);
    const later = await loadAppleSigning(sandbox(dataDir));
    expect(later.sandboxCa).toBe(cas[0]);
    expect((await stat(path.join(dir, 'pass-key.pem'))).mode & 0o777).toBe(0o600);
    expect(later).toMatchObject({ mode: 'sandbox', passTypeId: 'pass.dev.loyalty.sandbox', teamId: 'LOYALTYSBX' });
    const cert = new X509Certificate(later.cert);
    expect(cert.checkIssued(new X509Certificate(later.sandboxCa as string))).toBe(true);
    expect(cert.subject).toContain('UID=pass.dev.loyalty.sandbox');
    expect(cert.subject).toContain('CN=Pass Type ID: pass.dev.loyalty.sandbox');
    expect(cert.subject).toContain('OU=LOYALTYSBX');
  });

  it('names the directory to remove when it holds only some of the files', async () => {
    const dataDir = path.join(tmp, 'partial');
    await loadAppleSigning(sandbox(dataDir));
    await rm(path.join(dataDir, SANDBOX_SIGNING_DIR, 'pass-key.pem'));
    await expect(loadAppleSigning(sandbox(dataDir))).rejects.toThrow(/apple-sandbox lacks .*remove the directory/);
  });
});

/** A "WWDR" CA and a Pass Type ID certificate it issued, like Apple's, with an encrypted key. */
async function operatorFiles(dir: string, { uid = 'pass.com.example.test', ou = 'ABCDE12345' } = {}) {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'wwdr-key.pem',
    '-out',
    'wwdr.pem',
    '-days',
    '30',
    '-subj',
    '/CN=Test WWDR/O=Test',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
  openssl('x509', '-in', 'wwdr.pem', '-outform', 'DER', '-out', 'wwdr.cer');
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-keyout',
    'pass-key.pem',
    '-passout',
    'pass:test-passphrase',
    '-out',
    'pass.csr',
    '-subj',
    `/UID=${uid}/CN=Pass Type ID: ${uid}/OU=${ou}/O=Example/C=US`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'pass.csr',
    '-CA',
    'wwdr.pem',
    '-CAkey',
    'wwdr-key.pem',
    '-CAcreateserial',
    '-out',
    'pass.pem',
    '-days',
    '30',
  );
  return {
    cert: path.join(dir, 'pass.pem'),
    key: await readFile(path.join(dir, 'pass-key.pem'), 'utf8'),
    keyPassphrase: 'test-passphrase',
    wwdr: path.join(dir, 'wwdr.cer'),
    teamId: ou,
    passTypeId: uid,
  };
}

describe("the operator's certificates", () => {
  let t: TestServer;
  let apple: NonNullable<WalletConfig['apple']>;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmp, 'operator-'));
    apple = await operatorFiles(dir);
    t = await createTestServer({ sandbox: true, dataDir: path.join(dir, 'data'), wallet: wallet(apple) });
  });
  afterAll(() => t?.close());

  it('sign the passes (verified against their CA), with their pass type and team; there is no sandbox CA', async () => {
    const admin = await t.auth('acme-admin');
    const member = await t.inject({
      method: 'POST',
      url: '/members',
      headers: admin,
      payload: { brand_id: 'brand-acme', email: 'operator-pass@example.org' },
    });
    const issued = await t.inject({
      method: 'POST',
      url: `/members/${JSON.parse(member.payload).member_id}/passes`,
      headers: admin,
      payload: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' },
    });
    const { pass_code } = JSON.parse(issued.payload) as { pass_code: string };
    const res = await t.inject({ method: 'GET', url: `/wallet/${pass_code}.pkpass` });
    expect(res.statusCode, res.payload).toBe(200);
    const pass = openPkpass(res.rawPayload, await readFile(path.join(dir, 'wwdr.pem'), 'utf8'));
    expect(pass.signatureProblem).toBe('');
    expect(pass.hashProblems).toEqual([]);
    expect(pass.signerSubject).toContain('UID=pass.com.example.test');
    expect(pass.passJson).toMatchObject({ passTypeIdentifier: 'pass.com.example.test', teamIdentifier: 'ABCDE12345' });
    // The check can fail: against another CA, openssl refuses the same signature.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'x-key.pem',
        '-out',
        'x.pem',
        '-days',
        '1',
        '-subj',
        '/CN=Another CA',
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    const stranger = openPkpass(res.rawPayload, await readFile(path.join(dir, 'x.pem'), 'utf8'));
    expect(stranger.signatureProblem).toMatch(/verify|issuer/i);

    const ca = await t.inject({ method: 'GET', url: '/sandbox/wallet/ca.pem' });
    expect(ca.statusCode).toBe(404);
    expect(JSON.parse(ca.payload).message).toMatch(/operator's Apple certificate/);
    // Nothing was generated into the data directory.
    await expect(stat(path.join(dir, 'data', SANDBOX_SIGNING_DIR))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('are refused with a message naming the variable when they do not fit together', async () => {
    const load = (changes: Partial<typeof apple>) =>
      loadAppleSigning({ dataDir: tmp, wallet: wallet({ ...apple, ...changes }) });
    await expect(load({})).resolves.toMatchObject({ mode: 'operator', teamId: 'ABCDE12345' });
    await expect(load({ teamId: 'ZZZZZ99999' })).rejects.toThrow(
      /LOYALTY_APPLE_TEAM_ID is ZZZZZ99999, but .* team ABCDE12345/,
    );
    await expect(load({ passTypeId: 'pass.com.example.other' })).rejects.toThrow(/LOYALTY_APPLE_PASS_TYPE_ID/);
    await expect(load({ keyPassphrase: 'wrong' })).rejects.toThrow(/LOYALTY_APPLE_PASS_KEY: cannot read/);
    await expect(load({ wwdr: apple.cert })).rejects.toThrow(/LOYALTY_APPLE_WWDR did not issue/);
    await expect(load({ cert: path.join(dir, 'missing.pem') })).rejects.toThrow(
      /LOYALTY_APPLE_PASS_CERT: neither PEM text nor a readable file/,
    );
    const other = await operatorFiles(await mkdtemp(path.join(tmp, 'other-')));
    await expect(load({ key: other.key })).rejects.toThrow(/LOYALTY_APPLE_PASS_KEY is not the key of the certificate/);
  });
});
