import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash, X509Certificate } from 'node:crypto';
import { PKPass } from 'passkit-generator';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildPkpass,
  detachedSignature,
  PNG,
  passFiles,
  storecardPassJson,
  type TestCertificate,
  testCa,
  testSigner,
} from '#test-helpers/cli-unit/pkpass-builder.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { inspectPkpass } from './inspect-pass.js';

// `loyalty wallet inspect` finds a planted fault of each kind it claims, one at a time, and
// passes a good pass: ours and one built by passkit-generator, a library we did not write.

let ca: TestCertificate;
let signer: TestCertificate;
let anchors: X509Certificate[];

beforeAll(() => {
  ca = testCa();
  signer = testSigner(ca);
  anchors = [new X509Certificate(ca.pem)];
});

const codesOf = async (pkpass: Buffer, withCa = true) =>
  (await inspectPkpass(pkpass, withCa ? { ca: anchors } : {})).problems.map((p) => p.code);
const good = () => buildPkpass({ files: passFiles() }, signer, [ca]);
const withPassJson = (overrides: Record<string, unknown>) =>
  buildPkpass({ files: passFiles(storecardPassJson(overrides)) }, signer, [ca]);
const sha1 = (data: Buffer) => createHash('sha1').update(data).digest('hex');

describe('inspectPkpass: a good pass', () => {
  it('has no problem, and says what it checked', async () => {
    const { problems, checked } = await inspectPkpass(good(), { ca: anchors });
    expect(problems).toEqual([]);
    expect(checked.files).toEqual(['pass.json', 'icon.png', 'icon@2x.png', 'logo.png', 'manifest.json', 'signature']);
    expect(checked.chain).toBe('the CA given (Loyalty Test CA)');
    expect(checked.signer?.subject).toContain('UID=pass.dev.loyalty.sandbox');
  });

  it('built by passkit-generator (signed with node-forge, our CA as its WWDR) has none either', async () => {
    const model = storecardPassJson();
    const pass = new PKPass(
      { 'pass.json': Buffer.from(JSON.stringify(model)), 'icon.png': PNG, 'logo.png': PNG },
      { wwdr: ca.pem, signerCert: signer.pem, signerKey: signer.keyPem },
    );
    expect(await codesOf(pass.getAsBuffer())).toEqual([]);
  });

  it('without --ca, the chain must reach Apple WWDR (by name): a test CA does not', async () => {
    const { problems, checked } = await inspectPkpass(good());
    expect(problems.map((p) => p.code)).toEqual(['certificate_chain']);
    expect(checked.chain).toMatch(/Apple Worldwide Developer Relations Certification Authority by name only/);
    const wwdr = testCa('Apple Worldwide Developer Relations Certification Authority');
    const appleSigned = buildPkpass({ files: passFiles() }, testSigner(wwdr), [wwdr]);
    expect(await codesOf(appleSigned, false)).toEqual([]);
  });
});

describe('inspectPkpass: one planted fault at a time', () => {
  it('not a zip', async () => {
    expect(await codesOf(Buffer.from('<html>Not found</html>'))).toEqual(['not_a_pkpass']);
  });

  it('pass.json missing or not JSON', async () => {
    const { 'pass.json': _, ...rest } = passFiles();
    expect(await codesOf(buildPkpass({ files: rest }, signer, [ca]))).toEqual(['pass_json_invalid']);
    expect(
      await codesOf(buildPkpass({ files: { ...passFiles(), 'pass.json': Buffer.from('{') } }, signer, [ca])),
    ).toEqual(['pass_json_invalid']);
  });

  it('manifest.json missing, not JSON, a file unlisted, an entry for no file, a wrong SHA-1', async () => {
    const files = passFiles();
    expect(await codesOf(buildPkpass({ files, manifest: null }, signer, [ca]))).toEqual([
      'manifest_missing',
      'signature_missing',
    ]);
    expect(await codesOf(buildPkpass({ files, manifest: Buffer.from('nope') }, signer, [ca]))).toEqual([
      'manifest_invalid',
    ]);
    const hashes = Object.fromEntries(Object.entries(files).map(([n, d]) => [n, sha1(d)]));
    expect(
      await codesOf(buildPkpass({ files: { ...files, 'strip.png': PNG }, manifest: hashes }, signer, [ca])),
    ).toEqual(['manifest_unlisted_file']);
    expect(
      await codesOf(buildPkpass({ files, manifest: { ...hashes, 'logo@2x.png': sha1(PNG) } }, signer, [ca])),
    ).toEqual(['manifest_extra_entry']);
    const changed = { ...files, 'pass.json': Buffer.from(JSON.stringify(storecardPassJson({ description: 'x' }))) };
    const { problems } = await inspectPkpass(buildPkpass({ files: changed, manifest: hashes }, signer, [ca]), {
      ca: anchors,
    });
    expect(problems.map((p) => p.code)).toEqual(['manifest_hash']);
    expect(problems[0]?.message).toMatch(
      /^pass\.json: its SHA-1 is [0-9a-f]{40}, manifest\.json says "[0-9a-f]{40}"\.$/,
    );
  });

  it('signature missing, not a signature, or of another manifest', async () => {
    expect(await codesOf(buildPkpass({ files: passFiles(), signature: null }, signer, [ca]))).toEqual([
      'signature_missing',
    ]);
    expect(await codesOf(buildPkpass({ files: passFiles(), signature: Buffer.from('x') }, signer, [ca]))).toEqual([
      'signature_invalid',
    ]);
    const other = detachedSignature(Buffer.from('{"pass.json":"0"}'), signer, [ca]);
    expect(await codesOf(buildPkpass({ files: passFiles(), signature: other }, signer, [ca]))).toEqual([
      'signature_invalid',
    ]);
  });

  it('a signer certificate of another CA', async () => {
    const elsewhere = testCa('Someone Else CA');
    expect(await codesOf(buildPkpass({ files: passFiles() }, testSigner(elsewhere), [elsewhere]))).toEqual([
      'certificate_chain',
    ]);
  });

  it('an expired signer certificate, one not yet valid', async () => {
    const day = 86_400_000;
    const expired = testSigner(ca, {
      notBefore: new Date(Date.now() - 400 * day),
      notAfter: new Date(Date.now() - day),
    });
    const { problems } = await inspectPkpass(buildPkpass({ files: passFiles() }, expired, [ca]), { ca: anchors });
    expect(problems.map((p) => p.code)).toEqual(['certificate_expired']);
    expect(problems[0]?.fix).toMatch(/Renew the pass-type certificate/);
    const early = testSigner(ca, { notBefore: new Date(Date.now() + day) });
    expect(await codesOf(buildPkpass({ files: passFiles() }, early, [ca]))).toEqual(['certificate_not_yet_valid']);
  });

  it('passTypeIdentifier or teamIdentifier not those of the certificate (UID, OU)', async () => {
    const otherType = testSigner(ca, { passTypeId: 'pass.com.example.other' });
    const { problems } = await inspectPkpass(buildPkpass({ files: passFiles() }, otherType, [ca]), { ca: anchors });
    expect(problems.map((p) => p.code)).toEqual(['pass_type_mismatch']);
    expect(problems[0]?.message).toBe(
      'passTypeIdentifier is "pass.dev.loyalty.sandbox", the certificate is for "pass.com.example.other" (its UID).',
    );
    expect(await codesOf(buildPkpass({ files: passFiles() }, testSigner(ca, { teamId: 'ABCDE12345' }), [ca]))).toEqual([
      'team_mismatch',
    ]);
  });

  it('icon.png missing', async () => {
    const { 'icon.png': _, ...rest } = passFiles();
    expect(await codesOf(buildPkpass({ files: rest }, signer, [ca]))).toEqual(['image_missing']);
  });

  it('dates that are not W3C date-times', async () => {
    expect(await codesOf(withPassJson({ expirationDate: '2026-12-31' }))).toEqual(['date_format']);
    expect(await codesOf(withPassJson({ relevantDate: '31/12/2026 10:00' }))).toEqual(['date_format']);
    expect(await codesOf(withPassJson({ expirationDate: '2026-12-31T10:00:00+01:00' }))).toEqual([]);
  });

  it('barcodes: an unknown format, no message, no encoding, characters the encoding lacks', async () => {
    const barcode = { format: 'PKBarcodeFormatQR', message: 'QR-1', messageEncoding: 'iso-8859-1' };
    expect(await codesOf(withPassJson({ barcodes: [{ ...barcode, format: 'QR' }] }))).toEqual(['barcode_format']);
    expect(await codesOf(withPassJson({ barcodes: [{ ...barcode, message: undefined }] }))).toEqual([
      'barcode_message',
    ]);
    expect(await codesOf(withPassJson({ barcodes: [{ ...barcode, messageEncoding: undefined }] }))).toEqual([
      'barcode_encoding',
    ]);
    expect(await codesOf(withPassJson({ barcodes: [{ ...barcode, message: 'Zoë €5' }] }))).toEqual([
      'barcode_encoding',
    ]);
    expect(
      await codesOf(withPassJson({ barcodes: [{ ...barcode, message: 'Zoë €5', messageEncoding: 'utf-8' }] })),
    ).toEqual([]);
  });

  it('required pass.json keys missing or wrong', async () => {
    expect(await codesOf(withPassJson({ description: undefined }))).toEqual(['key_missing']);
    expect(await codesOf(withPassJson({ formatVersion: 2 }))).toEqual(['key_invalid']);
    expect(await codesOf(withPassJson({ storeCard: undefined }))).toEqual(['key_missing']);
    expect(await codesOf(withPassJson({ authenticationToken: 'short' }))).toEqual(['key_invalid']);
  });
});

describe('loyalty wallet inspect', () => {
  const files = async () => {
    const dir = await tempConfigHome();
    await writeFile(join(dir, 'ca.pem'), ca.pem);
    await writeFile(join(dir, 'good.pkpass'), good());
    const { 'icon.png': _, ...noIcon } = passFiles(storecardPassJson({ expirationDate: 'tomorrow' }));
    await writeFile(join(dir, 'bad.pkpass'), buildPkpass({ files: noIcon }, signer, [ca]));
    await writeFile(join(dir, 'not.pem'), 'hello');
    return dir;
  };

  it('exit 0 for a good pass; 1 with one line per problem and its fix; --json', async () => {
    const cwd = await files();
    const ok = await runCli(['wallet', 'inspect', 'good.pkpass', '--ca', 'ca.pem'], { cwd });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^✔ good\.pkpass: no problem found/);
    expect(ok.stdout).toContain('signature chain against the CA given (Loyalty Test CA)');

    const bad = await runCli(['wallet', 'inspect', 'bad.pkpass', '--ca', 'ca.pem'], { cwd });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('✖ expirationDate "tomorrow" is not a W3C date-time.\n    fix: Write expirationDate');
    expect(bad.stdout).toContain(
      '✖ icon.png is missing: iOS does not install a pass without it.\n    fix: Add icon.png',
    );
    expect(bad.stderr).toContain('bad.pkpass would not install: 2 problems.');

    const json = await runCli(['wallet', 'inspect', 'bad.pkpass', '--ca', 'ca.pem', '--json'], { cwd });
    expect(json.code).toBe(1);
    const answer = JSON.parse(json.stdout);
    expect(answer.valid).toBe(false);
    expect(answer.problems.map((p: { code: string }) => p.code)).toEqual(['date_format', 'image_missing']);
  });

  it('an unsigned pass says nothing was chained; an unreadable pass is exit 1; a --ca that is missing or not PEM is a usage error (2)', async () => {
    const cwd = await files();
    const unsigned = buildPkpass({ files: passFiles(), signature: null }, signer, [ca]);
    await writeFile(join(cwd, 'unsigned.pkpass'), unsigned);
    const plain = await runCli(['wallet', 'inspect', 'unsigned.pkpass'], { cwd });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain('✖ The signature file is missing.');
    expect(plain.stdout).toContain('no signature chain (no signature of a manifest to check)');
    const missing = await runCli(['wallet', 'inspect', 'nope.pkpass'], { cwd });
    expect([missing.code, missing.stderr]).toEqual([
      1,
      expect.stringContaining('Cannot read the pass nope.pkpass: ENOENT.'),
    ]);
    const noCa = await runCli(['wallet', 'inspect', 'good.pkpass', '--ca', 'missing.pem'], { cwd });
    expect([noCa.code, noCa.stderr]).toEqual([2, expect.stringContaining('Cannot read --ca missing.pem: ENOENT.')]);
    const notPem = await runCli(['wallet', 'inspect', 'good.pkpass', '--ca', 'not.pem'], { cwd });
    expect([notPem.code, notPem.stderr]).toEqual([
      2,
      expect.stringContaining('--ca not.pem holds no PEM certificate.'),
    ]);
  });
});
