import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { sandboxGoogleKey, SANDBOX_KEY_FILE } from '../services/wallet/google-sandbox-key.js';
import { googleSaveUrl } from '../services/wallet/google-save-link.js';
import { findWalletPass } from '../services/wallet/wallet-pass.js';

// Issue 28, Google Wallet in the sandbox: GET /wallet/{code}/links, the save link's JWT (checked
// with jose against the served JWKS, not through the signing code), the sandbox key at rest, and
// the save page that verifies a link and shows its card.

const ISSUER = '3388000000099999999';
const run = promisify(execFile);
let t: TestServer;
let dataDir: string;
let admin: { authorization: string };
let till: { authorization: string };
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-google-wallet-'));
  t = await createTestServer({ sandbox: true, dataDir: path.join(dataDir, 'data') });
  admin = await t.auth('acme-admin');
  till = await t.auth('acme-pos-1');
});
afterAll(async () => {
  await t?.close();
  await rm(dataDir, { recursive: true, force: true });
});

let n = 0;
async function issue(pass: { coupon_id: string } | { storecard_id: string }, brand = 'brand-acme') {
  const member = await t.inject({
    method: 'POST',
    url: '/members',
    headers: admin,
    payload: { brand_id: brand, email: `google-${++n}@example.org` },
  });
  const memberId = JSON.parse(member.payload).member_id as string;
  const issued = await t.inject({
    method: 'POST',
    url: `/members/${memberId}/passes`,
    headers: admin,
    payload: { brand_id: brand, ...pass },
  });
  expect(issued.statusCode, issued.payload).toBe(201);
  const code = (JSON.parse(issued.payload) as { pass_code: string }).pass_code;
  const [row] = await t.db.sql<{ id: string; expiration_date: string | null }[]>`
    SELECT id, expiration_date::text FROM passes WHERE pass_code = ${code}`;
  return { code, id: row!.id, expiration: row!.expiration_date };
}

type Links = { wallet_url: string; pkpass_url: string; google_save_url: string };
async function links(code: string): Promise<Links> {
  const res = await t.inject({ method: 'GET', url: `/wallet/${code}/links` });
  expect(res.statusCode, res.payload).toBe(200);
  return (JSON.parse(res.payload) as { data: Links }).data;
}

const jwtOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

/** The JWT checked as a third party would: with the key set the server serves, by jose's own verifier. */
async function verifyWithJwks(jwt: string) {
  const jwks = JSON.parse((await t.inject({ method: 'GET', url: '/sandbox/google-wallet/jwks.json' })).payload) as {
    keys: JWK[];
  };
  const { kid } = decodeProtectedHeader(jwt);
  const jwk = jwks.keys.find((k) => k.kid === kid);
  expect(jwk, 'the JWT names a key of the JWKS').toBeDefined();
  const { payload, protectedHeader } = await jwtVerify(jwt, await importJWK(jwk!, 'RS256'), { audience: 'google' });
  expect(protectedHeader.alg).toBe('RS256');
  return payload as Record<string, any>;
}

const savePage = (jwt: string) => t.inject({ method: 'GET', url: `/sandbox/google-wallet/save/${jwt}` });

describe('GET /wallet/{code}/links', () => {
  it('answers the wallet page, the .pkpass and a sandbox save link; no token needed, nothing cached', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    const res = await t.inject({ method: 'GET', url: `/wallet/${pass.code}/links` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = JSON.parse(res.payload) as { success: boolean; data: Links };
    expect(body.success).toBe(true);
    const base = t.server.info.uri.replace(/\/+$/, '');
    expect(body.data.wallet_url).toBe(`${base}/wallet/${pass.code}`);
    expect(body.data.pkpass_url).toBe(`${base}/wallet/${pass.code}.pkpass`);
    expect(body.data.google_save_url.startsWith(`${base}/sandbox/google-wallet/save/ey`)).toBe(true);
  });

  it('answers an unknown code with a 404 JSON error', async () => {
    for (const code of ['0000000000000000', 'x'.repeat(500)]) {
      const res = await t.inject({ method: 'GET', url: `/wallet/${code}/links` });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.payload)).toMatchObject({ error: 'not_found', message: 'Pass not found.' });
    }
  });
});

describe('the save link JWT', () => {
  it('is a coupon as an offer class and object, verifiable with the served JWKS', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    const claims = await verifyWithJwks(jwtOf((await links(pass.code)).google_save_url));
    expect(claims).toMatchObject({
      iss: 'google-wallet@sandbox.loyalty.invalid',
      aud: 'google',
      typ: 'savetowallet',
      origins: [],
    });
    expect(typeof claims.iat).toBe('number');
    expect(Object.keys(claims.payload).sort()).toEqual(['offerClasses', 'offerObjects']);
    const [offerClass] = claims.payload.offerClasses;
    const [offer] = claims.payload.offerObjects;
    expect(offerClass).toMatchObject({
      issuerName: 'Acme',
      provider: 'Acme',
      title: 'Welcome 10% off',
      redemptionChannel: 'INSTORE',
    });
    expect(offerClass.id).toMatch(new RegExp(`^${ISSUER}\\.offer-[A-Za-z0-9_-]{22}$`));
    expect(offer).toEqual({
      id: `${ISSUER}.${pass.id}`,
      classId: offerClass.id,
      state: 'ACTIVE',
      barcode: { type: 'QR_CODE', value: pass.code, alternateText: pass.code },
      validTimeInterval: { end: { date: `${pass.expiration}T23:59:59` } },
    });
    // Another pass of the same coupon shares the class, not the object.
    const other = await verifyWithJwks(
      jwtOf((await links((await issue({ coupon_id: 'coupon-welcome' })).code)).google_save_url),
    );
    expect(other.payload.offerObjects[0].classId).toBe(offerClass.id);
    expect(other.payload.offerObjects[0].id).not.toBe(offer.id);
  });

  it('is a storecard as a loyalty object with its balance and points, as they are when the link is made', async () => {
    const card = await issue({ storecard_id: 'card-points' });
    for (const [type, points, reference] of [
      ['earn', 50, 'r-1'],
      ['spend', 20, 'r-2'],
    ] as const) {
      const scan = await t.inject({
        method: 'POST',
        url: '/passes/scan/storecard',
        headers: till,
        payload: { pass_code: card.code, type, points, transaction_reference: `${card.code}-${reference}` },
      });
      expect(scan.statusCode, scan.payload).toBe(201);
    }
    const url = (await links(card.code)).google_save_url;
    console.info(`google save link of a storecard: ${url.length} characters`);
    const claims = await verifyWithJwks(jwtOf(url));
    expect(Object.keys(claims.payload).sort()).toEqual(['loyaltyClasses', 'loyaltyObjects']);
    expect(claims.payload.loyaltyClasses[0]).toMatchObject({ issuerName: 'Acme', programName: 'Acme Points' });
    expect(claims.payload.loyaltyObjects[0]).toMatchObject({
      id: `${ISSUER}.${card.id}`,
      state: 'ACTIVE',
      barcode: { type: 'QR_CODE', value: card.code, alternateText: card.code },
      loyaltyPoints: { label: 'Balance', balance: { int: 30 } },
      secondaryLoyaltyPoints: { label: 'Points', balance: { int: 50 } },
    });
    expect(claims.payload.loyaltyObjects[0].classId).toMatch(new RegExp(`^${ISSUER}\\.loyalty-`));
  });

  it('says INACTIVE for a redeemed coupon', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    const scan = await t.inject({
      method: 'POST',
      url: '/passes/scan',
      headers: till,
      payload: { pass_code: pass.code },
    });
    expect(scan.statusCode, scan.payload).toBe(200);
    const claims = await verifyWithJwks(jwtOf((await links(pass.code)).google_save_url));
    expect(claims.payload.offerObjects[0].state).toBe('INACTIVE');
  });

  it('stays under 1,800 characters with a long brand name and title, shortening them in the link only', async () => {
    const brand = `Ünïcødé Brånd 🛍️ ${'Very Long Brand Name '.repeat(20)}`;
    const title = `${'A very long coupon title with ✨ sparkles '.repeat(20)}end`;
    await t.db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-long', 'org-acme', ${brand})`;
    await t.db.sql`INSERT INTO coupons (id, brand_id, organization_id, title, external_reference, valid_days, active)
                   VALUES ('coupon-long', 'brand-long', 'org-acme', ${title}, 'LONG', 30, true)`;
    const pass = await issue({ coupon_id: 'coupon-long' }, 'brand-long');
    const url = (await links(pass.code)).google_save_url;
    console.info(
      `google save link with a ${brand.length}-character brand and a ${title.length}-character title: ${url.length} characters`,
    );
    expect(url.length).toBeLessThanOrEqual(1800);
    const claims = await verifyWithJwks(jwtOf(url));
    const [offerClass] = claims.payload.offerClasses;
    expect(brand.startsWith(offerClass.issuerName.replace(/…$/, ''))).toBe(true);
    expect(offerClass.issuerName.endsWith('…')).toBe(true);
    expect(title.startsWith(offerClass.title.replace(/…$/, ''))).toBe(true);
    expect(offerClass.title.length).toBeGreaterThan(10);
    // Behind a 300-character public URL the brand and title are cut further, and the link still fits.
    const walletPass = await findWalletPass(t.db.sql, pass.code);
    const longBase = `https://${'x'.repeat(280)}.example.org`;
    const app = { sql: t.db.sql, config: t.config, baseUrl: () => longBase };
    const behind = await googleSaveUrl(app, walletPass!);
    expect(behind!.startsWith(`${longBase}/sandbox/google-wallet/save/`)).toBe(true);
    expect(behind!.length).toBeLessThanOrEqual(1800);
    const cut = (await verifyWithJwks(jwtOf(behind!))).payload.offerClasses[0];
    expect([...cut.issuerName].length).toBeLessThan([...offerClass.issuerName].length);
    console.info(
      `the same behind a ${longBase.length}-character base URL: ${behind!.length} characters, brand cut to ${[...cut.issuerName].length}`,
    );
    // An ordinary pass's link, for the figures.
    const ordinary = (await links((await issue({ coupon_id: 'coupon-welcome' })).code)).google_save_url;
    console.info(`google save link of an ordinary coupon: ${ordinary.length} characters`);
  });
});

describe('the sandbox key', () => {
  it('is made once into the data directory, 0600 in a 0700 directory, and read again on the next start', async () => {
    const file = path.join(dataDir, 'data', SANDBOX_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readFile(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const served = JSON.parse((await t.inject({ method: 'GET', url: '/sandbox/google-wallet/jwks.json' })).payload) as {
      keys: JWK[];
    };
    expect(served.keys).toHaveLength(1);
    expect(served.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(served.keys[0]).not.toHaveProperty('d');
    // What a new server process does at its first link: it reads the same key.
    expect((await sandboxGoogleKey(path.join(dataDir, 'data'))).kid).toBe(served.keys[0]!.kid);
  });

  it('is one key when several makers race in one process: the losers read the winner, no temporary file is left', async () => {
    const fresh = path.join(dataDir, 'race');
    const keys = await Promise.all(Array.from({ length: 6 }, () => sandboxGoogleKey(fresh)));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await readdir(path.join(fresh, 'wallet'))).toEqual([path.basename(SANDBOX_KEY_FILE)]);
  });

  it('is one key when several processes start at once (the built module, as `npm start` runs it)', async () => {
    const fresh = path.join(dataDir, 'race-processes');
    const built = new URL('../../dist/services/wallet/google-sandbox-key.js', import.meta.url).href;
    const script = `const m = await import(${JSON.stringify(built)}); console.log((await m.sandboxGoogleKey(process.argv[1])).kid);`;
    const kids = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, fresh]);
        return stdout.trim();
      }),
    );
    expect(kids[0]).toMatch(/^[\w-]{43}$/);
    expect(new Set(kids).size, kids.join(' ')).toBe(1);
    expect(await readdir(path.join(fresh, 'wallet'))).toEqual([path.basename(SANDBOX_KEY_FILE)]);
  });
});

describe('GET /sandbox/google-wallet/save/{jwt}', () => {
  it('verifies the link and shows the card from its claims: brand, title, state, QR code, the decoded claims', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    const res = await savePage(jwtOf((await links(pass.code)).google_save_url));
    expect(res.statusCode, res.payload).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'unsafe-inline'; img-src data:/,
    );
    expect(res.payload).toContain('<h1 id="card-title">Welcome 10% off</h1>');
    expect(res.payload).toContain('<p>Acme</p>');
    expect(res.payload).toContain('data-state="ACTIVE"');
    expect(res.payload).toMatch(/<svg class="qr" role="img"/);
    expect(res.payload).toContain(`<p class="alt">${pass.code}</p>`);
    expect(res.payload).toContain(`${ISSUER}.${pass.id}`);
    expect(res.payload).toContain('&quot;typ&quot;: &quot;savetowallet&quot;');
    expect(res.payload).not.toMatch(/<script/i);
  });

  it('shows a redeemed pass as inactive, without a code to scan', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    await t.inject({ method: 'POST', url: '/passes/scan', headers: till, payload: { pass_code: pass.code } });
    const res = await savePage(jwtOf((await links(pass.code)).google_save_url));
    expect(res.statusCode).toBe(200);
    expect(res.payload).toContain('data-state="INACTIVE"');
    expect(res.payload).not.toContain('<svg class="qr"');
    expect(res.payload).toContain('no code to scan');
  });

  it('answers a changed, foreign, expired or malformed JWT with an HTML 400 that says why', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    const jwt = jwtOf((await links(pass.code)).google_save_url);
    const [header, body, signature] = jwt.split('.') as [string, string, string];
    const claims = decodeJwt(jwt);
    // The balance raised in the claims, the signature kept.
    const changed = `${header}.${Buffer.from(JSON.stringify({ ...claims, iss: 'someone-else' })).toString('base64url')}.${signature}`;
    const flipped = `${header}.${body}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(stranger);
    const sandboxKey = (await sandboxGoogleKey(path.join(dataDir, 'data'))).privateKey;
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(sandboxKey);
    const notSave = await new SignJWT({ ...claims, typ: 'other' })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(sandboxKey);
    const cases: [string, string, RegExp][] = [
      ['changed claims', changed, /signature does not match/],
      ['changed signature', flipped, /signature does not match/],
      ['another key', foreign, /signature does not match/],
      ['expired', expired, /expired/],
      ['another typ', notSave, /typ claim/],
      ['not a JWT', 'not-a-jwt', /not a signed JWT/],
      ['overlong', 'a'.repeat(9000), /characters long/],
    ];
    for (const [name, token, why] of cases) {
      const res = await savePage(token);
      expect(res.statusCode, name).toBe(400);
      expect(res.headers['content-type'], name).toBe('text/html; charset=utf-8');
      expect(res.payload, name).toContain('<h1>This link does not verify</h1>');
      expect(res.payload, name).toMatch(why);
    }
  });
});
