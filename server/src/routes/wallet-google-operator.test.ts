import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import type { WalletApp } from '../services/wallet/wallet-app.js';
import { googleSignerOf, serviceAccountOf } from '../services/wallet/google-signer.js';

// Issue 28, Google Wallet with the operator's issuer (LOYALTY_GOOGLE_WALLET_ISSUER_ID and a
// service account's JSON key, made here): real pay.google.com links signed by that key, checked
// with its public half; on a server that is not a sandbox, so the sandbox's Google routes are gone.

const ISSUER = '3388000000012345678';
const EMAIL = 'wallet-links@loyalty-test.iam.gserviceaccount.com';
const KEY_ID = '0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const serviceAccount = JSON.stringify({
  type: 'service_account',
  project_id: 'loyalty-test',
  private_key_id: KEY_ID,
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
  client_email: EMAIL,
  client_id: '123456789012345678901',
});

let t: TestServer;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-google-operator-'));
  const file = path.join(dir, 'service-account.json');
  await writeFile(file, serviceAccount, { mode: 0o600 });
  t = await createTestServer({
    sandbox: false,
    dataDir: path.join(dir, 'data'),
    wallet: {
      apple: undefined,
      apnsUrl: 'https://api.push.apple.com',
      google: { issuerId: ISSUER, serviceAccount: file },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

async function issueCoupon() {
  const admin = await t.auth('acme-admin');
  const member = await t.inject({
    method: 'POST',
    url: '/members',
    headers: admin,
    payload: { brand_id: 'brand-acme', email: `operator-${Date.now()}@example.org` },
  });
  const issued = await t.inject({
    method: 'POST',
    url: `/members/${JSON.parse(member.payload).member_id}/passes`,
    headers: admin,
    payload: { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' },
  });
  const code = JSON.parse(issued.payload).pass_code as string;
  const [row] = await t.db.sql<{ id: string }[]>`SELECT id FROM passes WHERE pass_code = ${code}`;
  return { code, id: row!.id };
}

describe('with the operator Google Wallet issuer', () => {
  it("links to pay.google.com with a JWT signed by the service account's key", async () => {
    const pass = await issueCoupon();
    const res = await t.inject({ method: 'GET', url: `/wallet/${pass.code}/links` });
    expect(res.statusCode, res.payload).toBe(200);
    const url = JSON.parse(res.payload).data.google_save_url as string;
    expect(url.startsWith('https://pay.google.com/gp/v/save/')).toBe(true);
    expect(url.length).toBeLessThanOrEqual(1800);
    const jwt = url.slice('https://pay.google.com/gp/v/save/'.length);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'RS256', kid: KEY_ID });
    const publicPem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const { payload } = await jwtVerify(jwt, await importSPKI(publicPem, 'RS256'), {
      issuer: EMAIL,
      audience: 'google',
    });
    expect(payload.typ).toBe('savetowallet');
    const offer = (payload.payload as { offerObjects: { id: string; classId: string; state: string }[] })
      .offerObjects[0]!;
    expect(offer.id).toBe(`${ISSUER}.${pass.id}`);
    expect(offer.classId.startsWith(`${ISSUER}.offer-`)).toBe(true);
    expect(offer.state).toBe('ACTIVE');
  });

  it("puts Google's link on the wallet page, with no sandbox note for it", async () => {
    const pass = await issueCoupon();
    const res = await t.inject({ method: 'GET', url: `/wallet/${pass.code}` });
    expect(res.statusCode).toBe(200);
    expect(res.payload).toMatch(
      /<a class="wallet-button" href="https:\/\/pay\.google\.com\/gp\/v\/save\/ey[\w-]+\.[\w-]+\.[\w-]+" data-action="google-wallet"/,
    );
    expect(res.payload).not.toContain('preview of the card');
    // The Apple pass is still the sandbox's here (no Apple certificate), but its CA is not served outside sandbox mode.
    expect(res.payload).toContain('test certificate authority, which no iPhone trusts');
    expect(res.payload).not.toContain('/sandbox/wallet/ca.pem');
  });

  it('has no sandbox save page or key set outside sandbox mode', async () => {
    for (const url of ['/sandbox/google-wallet/jwks.json', '/sandbox/google-wallet/save/eyJhbGciOiJSUzI1NiJ9.e30.c2ln'])
      expect((await t.inject({ method: 'GET', url })).statusCode, url).toBe(404);
  });
});

describe('serviceAccountOf', () => {
  it('takes the JSON key as text too', () => {
    expect(serviceAccountOf(serviceAccount)).toMatchObject({ email: EMAIL, kid: KEY_ID });
  });

  it('names the variable and the problem, never the key', () => {
    const without = (field: string) => {
      const json = JSON.parse(serviceAccount) as Record<string, unknown>;
      delete json[field];
      return JSON.stringify(json);
    };
    const cases: [string, RegExp][] = [
      ['{not json', /LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT is not a service account's JSON key/],
      [without('private_key'), /LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT has no private_key/],
      [without('client_email'), /has no client_email/],
      [without('private_key_id'), /has no private_key_id/],
      [
        JSON.stringify({ ...JSON.parse(serviceAccount), private_key: 'garbage' }),
        /private_key is not a PEM private key/,
      ],
      [path.join(dir, 'missing.json'), /cannot read the file .*missing\.json \(ENOENT\)/],
    ];
    for (const [input, message] of cases) {
      let error: Error | undefined;
      try {
        serviceAccountOf(input);
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message, input.slice(0, 30)).toMatch(message);
      expect(error?.message).not.toContain('PRIVATE KEY');
    }
  });
});

it('makes no Google links on a server that is neither a sandbox nor given an issuer', async () => {
  const app = {
    config: { ...t.config, sandbox: false, wallet: { ...t.config.wallet, google: undefined } },
  } as WalletApp;
  expect(await googleSignerOf(app)).toBeUndefined();
});
