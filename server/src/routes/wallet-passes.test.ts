import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { applePassJsonProblems, openPkpass } from '#test-helpers/pkpass-check.js';
import { createTestServer, TEST_SECRET_KEY, type TestServer } from '#test-helpers/server.js';
import { SANDBOX_SIGNING_DIR } from '../services/wallet/apple-signing.js';
import { authenticationTokenOf } from '../services/wallet/pass-identity.js';

// GET /wallet/{code}.pkpass and GET /sandbox/wallet/ca.pem on a sandbox server with its own data
// directory: every pass is opened with unzip, its manifest rehashed with sha1sum and its signature
// verified by openssl against the CA the server serves.

const PKPASS = 'application/vnd.apple.pkpass';
let t: TestServer;
let dataDir: string;
let ca: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'wallet-passes-'));
  t = await createTestServer({ sandbox: true, dataDir });
  await t.db.sql`UPDATE clients SET abilities = array_append(abilities, 'sandbox.manage')
                 WHERE client_id = 'globex-admin' AND NOT 'sandbox.manage' = ANY(abilities)`;
  const res = await t.inject({ method: 'GET', url: '/sandbox/wallet/ca.pem' });
  expect(res.statusCode).toBe(200);
  ca = res.payload;
});
afterAll(async () => {
  await t?.close();
  await rm(dataDir, { recursive: true, force: true });
});

let n = 0;
async function issue(pass: { coupon_id: string } | { storecard_id: string }, org: 'acme' | 'globex' = 'acme') {
  const admin = await t.auth(`${org}-admin`);
  const brand = `brand-${org}`;
  const member = await t.inject({
    method: 'POST',
    url: '/members',
    headers: admin,
    payload: { brand_id: brand, email: `pkpass-${++n}@example.org` },
  });
  const issued = await t.inject({
    method: 'POST',
    url: `/members/${JSON.parse(member.payload).member_id}/passes`,
    headers: admin,
    payload: { brand_id: brand, ...pass },
  });
  expect(issued.statusCode, issued.payload).toBe(201);
  const code = (JSON.parse(issued.payload) as { pass_code: string }).pass_code;
  const [row] = await t.db.sql<{ id: string; expiration_date: string | null }[]>`
    SELECT id, expiration_date::text FROM passes WHERE pass_code = ${code}`;
  if (!row) throw new Error(`pass ${code} is not in the database`);
  return { code, id: row.id, expirationDate: row.expiration_date };
}

const download = (code: string, headers: Record<string, string> = {}) =>
  t.inject({ method: 'GET', url: `/wallet/${code}.pkpass`, headers });

function opened(body: Buffer) {
  const pass = openPkpass(body, ca);
  expect(pass.signatureProblem).toBe('');
  expect(pass.hashProblems).toEqual([]);
  expect(applePassJsonProblems(pass.passJson)).toEqual([]);
  return pass;
}

describe('GET /wallet/{code}.pkpass', () => {
  it('answers a coupon pass that unzip, sha1sum and openssl accept, with the keys Apple documents', async () => {
    const { code, id, expirationDate } = await issue({ coupon_id: 'coupon-welcome' });
    // passkit-generator warns on the console about what it dropped or found missing: nothing here.
    const warn = vi.spyOn(console, 'warn');
    const res = await download(code);
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
    expect(res.statusCode, res.payload).toBe(200);
    expect(res.headers['content-type']).toBe(PKPASS);
    expect(res.headers['cache-control']).toBe('private, no-cache');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const pass = opened(res.rawPayload);
    expect(pass.files.sort()).toEqual(
      [
        'icon.png',
        'icon@2x.png',
        'icon@3x.png',
        'logo.png',
        'logo@2x.png',
        'manifest.json',
        'pass.json',
        'signature',
      ].sort(),
    );
    expect(pass.imageSizes).toEqual({
      'icon.png': '29x29',
      'icon@2x.png': '58x58',
      'icon@3x.png': '87x87',
      'logo.png': '160x50',
      'logo@2x.png': '320x100',
    });
    expect(pass.signerSubject).toContain('UID=pass.dev.loyalty.sandbox');
    expect(pass.signerSubject).toContain('OU=LOYALTYSBX');
    const json = pass.passJson;
    expect(json).toMatchObject({
      formatVersion: 1,
      passTypeIdentifier: 'pass.dev.loyalty.sandbox',
      teamIdentifier: 'LOYALTYSBX',
      serialNumber: id,
      authenticationToken: authenticationTokenOf(TEST_SECRET_KEY, id),
      organizationName: 'Acme',
      barcodes: [{ format: 'PKBarcodeFormatQR', message: code, messageEncoding: 'iso-8859-1', altText: code }],
      expirationDate: `${expirationDate}T23:59:59.000Z`,
    });
    expect(json.webServiceURL).toMatch(/^https?:\/\/[^/]+\/wallet\/apple$/);
    expect(json.description).toContain('Welcome 10% off');
    expect(json.coupon.primaryFields[0]).toMatchObject({ value: 'Welcome 10% off' });
    expect(json.storeCard).toBeUndefined();
    expect(json.voided).toBeUndefined();
  });

  it('answers 304 to If-None-Match or If-Modified-Since of the current version, and 200 otherwise', async () => {
    const { code } = await issue({ coupon_id: 'coupon-welcome' });
    const first = await download(code);
    const etag = String(first.headers.etag);
    const again = await download(code);
    expect(again.headers.etag).toBe(etag);
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);

    const notModified = await download(code, { 'if-none-match': etag });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.payload).toBe('');
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.headers['cache-control']).toBe('private, no-cache');
    expect((await download(code, { 'if-none-match': '"another"' })).statusCode).toBe(200);
    const since = String(first.headers['last-modified']);
    expect((await download(code, { 'if-modified-since': since })).statusCode).toBe(304);
    expect((await download(code, { 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' })).statusCode).toBe(200);
  });

  it('is a storeCard with balance and points and their changeMessage; an earn makes a new version', async () => {
    const { code } = await issue({ storecard_id: 'card-points' });
    const before = await download(code);
    const card = opened(before.rawPayload).passJson;
    expect(card.coupon).toBeUndefined();
    const fields = () => [...card.storeCard.primaryFields, ...card.storeCard.secondaryFields];
    expect(fields()).toEqual(
      expect.arrayContaining([
        { key: 'balance', label: 'Balance', value: 0, changeMessage: 'Balance %@' },
        { key: 'points', label: 'Points', value: 0, changeMessage: 'Points %@' },
      ]),
    );
    const earn = await t.inject({
      method: 'POST',
      url: '/passes/scan/storecard',
      headers: await t.auth('acme-pos-1'),
      payload: { pass_code: code, type: 'earn', points: 50, transaction_reference: `pkpass-earn-${code}` },
    });
    expect(earn.statusCode, earn.payload).toBe(201);
    const after = await download(code, { 'if-none-match': String(before.headers.etag) });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const updated = opened(after.rawPayload).passJson.storeCard;
    expect(updated.primaryFields[0]).toMatchObject({ key: 'balance', value: 50 });
    expect(updated.secondaryFields[0]).toMatchObject({ key: 'points', value: 50 });
  });

  it('voids a coupon redeemed through POST /passes/scan, as a new version', async () => {
    const { code } = await issue({ coupon_id: 'coupon-welcome' });
    const before = await download(code);
    const scan = await t.inject({
      method: 'POST',
      url: '/passes/scan',
      headers: await t.auth('acme-pos-1'),
      payload: { pass_code: code },
    });
    expect(scan.statusCode, scan.payload).toBe(200);
    const after = await download(code, { 'if-none-match': String(before.headers.etag) });
    expect(after.statusCode).toBe(200);
    const json = opened(after.rawPayload).passJson;
    expect(json.voided).toBe(true);
    expect(json.coupon.headerFields).toEqual([{ key: 'status', label: 'Status', value: 'Redeemed' }]);
  });

  it('voids a pass once the sandbox clock passes its expiry; Last-Modified is the moment it expired', async () => {
    const { code, expirationDate } = await issue({ coupon_id: 'coupon-globex' }, 'globex');
    expect(expirationDate).toBeTruthy();
    const before = await download(code);
    expect(opened(before.rawPayload).passJson.voided).toBeUndefined();
    const days = Math.ceil((Date.parse(`${expirationDate}T00:00:00Z`) - Date.now()) / 86_400_000) + 1;
    const move = await t.inject({
      method: 'POST',
      url: '/sandbox/clock',
      headers: await t.auth('globex-admin'),
      payload: { advance: `${days}d` },
    });
    expect(move.statusCode, move.payload).toBe(200);
    const after = await download(code);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(opened(after.rawPayload).passJson.voided).toBe(true);
    const nextDay = new Date(Date.parse(`${expirationDate}T00:00:00Z`) + 86_400_000);
    expect(after.headers['last-modified']).toBe(nextDay.toUTCString());
  });

  it('makes a pass for a brand whose name has no glyph in the icon font (an accent, an emoji)', async () => {
    const { code } = await issue({ coupon_id: 'coupon-welcome' });
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-emoji', 'org-acme', ${'🍩 Étoile & "Co"'})`;
    await t.db.sql`UPDATE passes SET brand_id = 'brand-emoji' WHERE pass_code = ${code}`;
    const res = await download(code);
    expect(res.statusCode).toBe(200);
    const json = opened(res.rawPayload).passJson;
    expect(json).toMatchObject({ organizationName: '🍩 Étoile & "Co"', logoText: '🍩 Étoile & "Co"' });
  });

  it('answers an unknown, a lowercase or an overlong code with a JSON 404', async () => {
    const { code } = await issue({ coupon_id: 'coupon-welcome' });
    for (const unknown of ['0000000000000000', code.toLowerCase(), 'x'.repeat(500)]) {
      const res = await download(unknown);
      expect(res.statusCode, unknown.slice(0, 20)).toBe(404);
      expect(JSON.parse(res.payload)).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('GET /wallet/{code} with Accept', () => {
  it('answers the pass when Accept prefers application/vnd.apple.pkpass, the page otherwise', async () => {
    const { code } = await issue({ coupon_id: 'coupon-welcome' });
    const pkpass = await download(code);
    const viaAccept = await t.inject({ method: 'GET', url: `/wallet/${code}`, headers: { accept: PKPASS } });
    expect(viaAccept.statusCode).toBe(200);
    expect(viaAccept.headers['content-type']).toBe(PKPASS);
    expect(viaAccept.headers.etag).toBe(pkpass.headers.etag);
    expect(String(viaAccept.headers.vary)).toMatch(/accept/i);
    expect(opened(viaAccept.rawPayload).passJson.barcodes[0].message).toBe(code);
    const notModified = await t.inject({
      method: 'GET',
      url: `/wallet/${code}`,
      headers: { accept: PKPASS, 'if-none-match': String(pkpass.headers.etag) },
    });
    expect(notModified.statusCode).toBe(304);

    for (const accept of ['text/html', `${PKPASS};q=0.5, text/html`, '*/*', 'not a media type;;;']) {
      const page = await t.inject({ method: 'GET', url: `/wallet/${code}`, headers: { accept } });
      expect(page.statusCode, accept).toBe(200);
      expect(page.headers['content-type'], accept).toBe('text/html; charset=utf-8');
    }
    const unknown = await t.inject({ method: 'GET', url: '/wallet/0000000000000000', headers: { accept: PKPASS } });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('the sandbox CA', () => {
  it('lives in the data directory, 0700 and 0600, and is the CA that GET /sandbox/wallet/ca.pem serves', async () => {
    const dir = path.join(dataDir, SANDBOX_SIGNING_DIR);
    expect((await stat(path.dirname(dir))).mode & 0o777).toBe(0o700);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const file of ['ca.pem', 'pass-certificate.pem', 'pass-key.pem'])
      expect((await stat(path.join(dir, file))).mode & 0o777, file).toBe(0o600);
    expect(await readFile(path.join(dir, 'ca.pem'), 'utf8')).toBe(ca);
    const res = await t.inject({ method: 'GET', url: '/sandbox/wallet/ca.pem' });
    expect(res.headers['content-type']).toBe('application/x-pem-file');
    expect(res.payload).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
  });
});
