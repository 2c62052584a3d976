// The sandbox's "Save to Google Wallet" page (GET /sandbox/google-wallet/save/{jwt}, issue 28) in
// Debian's headless Chromium at phone width against the real server: the wallet page's button
// leads to it, the link's JWT verifies with the served JWKS (jose's createRemoteJWKSet over HTTP),
// the page shows the card from the claims with a QR code that decodes (jsQR on a screenshot) to
// the pass's qr_code, a storecard shows its balance and points, a redeemed coupon has no code, and
// a changed link gets the 400 page. Nothing but this server is requested. Screenshots are kept in
// test-artifacts/google-wallet/.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import jsQRModule from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { artifactsDir, launchChromium, openRecorded } from '#test-helpers/browser.js';
import { fetchToken, type LiveServer, startLiveServer } from '#test-helpers/live-server.js';

/** jsqr is CommonJS with `exports.default`: under NodeNext its default import is the module object. */
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as typeof jsQRModule.default;

const PHONE = { width: 390, height: 844 };

let live: LiveServer;
let admin: string;
let till: string;
let browser: Browser;
let dataDir: string;
const artifacts = artifactsDir('google-wallet');

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-google-save-'));
  live = await startLiveServer({ sandbox: true, dataDir }, { worker: false });
  admin = await fetchToken(live.url, 'acme-admin');
  till = await fetchToken(live.url, 'acme-pos-1');
  browser = await launchChromium();
  console.info(`google wallet save page screenshots: ${artifacts}`);
});
afterAll(async () => {
  await browser?.close();
  await live?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function api(token: string, method: string, route: string, body: unknown) {
  const res = await fetch(`${live.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

let n = 0;
async function issuePass(pass: { coupon_id: string } | { storecard_id: string }) {
  const member = await api(admin, 'POST', '/members', {
    brand_id: 'brand-acme',
    email: `google-save-${++n}@example.org`,
  });
  const issued = await api(admin, 'POST', `/members/${member.member_id}/passes`, { brand_id: 'brand-acme', ...pass });
  return issued.pass_code as string;
}

async function saveUrlOf(code: string): Promise<string> {
  const res = await fetch(`${live.url}/wallet/${code}/links`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { google_save_url: string } }).data.google_save_url;
}

async function decodeQr(page: Page, file: string): Promise<string | undefined> {
  const png = await page.locator('svg.qr').screenshot({ path: `${artifacts}${file}` });
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data;
}

const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

it("leads from the wallet page's button to the save page, which shows the coupon with a QR code that scans", async () => {
  const code = await issuePass({ coupon_id: 'coupon-welcome' });
  const { page, requests, problems } = await openRecorded(browser, `${live.url}/wallet/${code}`, {
    viewport: PHONE,
    deviceScaleFactor: 2,
    consoleTypes: ['error', 'warning'],
  });
  const [response] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'load' }),
    page.getByRole('link', { name: 'Save to Google Wallet' }).click(),
  ]);
  expect(response?.status()).toBe(200);
  expect(new URL(page.url()).pathname).toMatch(/^\/sandbox\/google-wallet\/save\/ey/);
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Welcome 10% off');
  expect(await page.locator('.brand p').textContent()).toBe('Acme');
  expect(await page.locator('[data-field="state"]').textContent()).toBe('Active');
  expect(await page.locator('[data-field="valid-until"]').textContent()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(await decodeQr(page, 'coupon-save-qr.png'), 'the QR code').toBe(code);
  expect(await fitsWidth(page), 'no sideways scrolling on a phone').toBe(true);
  await page.screenshot({ path: `${artifacts}coupon-save-phone.png`, fullPage: true });
  await page.locator('details summary').click();
  expect(await page.locator('[data-field="claims"]').textContent()).toContain('"typ": "savetowallet"');
  expect(await fitsWidth(page), 'the decoded claims wrap').toBe(true);
  await page.screenshot({ path: `${artifacts}coupon-save-claims-phone.png`, fullPage: true });
  expect(
    requests.every((url) => url.startsWith(`${live.url}/`)),
    requests.join(' '),
  ).toBe(true);
  expect(requests).toHaveLength(2);
  expect(problems).toEqual([]);
  await page.close();
});

it('signs links that verify with the served JWKS, fetched over HTTP', async () => {
  const url = await saveUrlOf(await issuePass({ coupon_id: 'coupon-welcome' }));
  const jwks = createRemoteJWKSet(new URL(`${live.url}/sandbox/google-wallet/jwks.json`));
  const { payload } = await jwtVerify(url.slice(url.lastIndexOf('/') + 1), jwks, {
    audience: 'google',
    algorithms: ['RS256'],
  });
  expect(payload.typ).toBe('savetowallet');
});

it("shows a storecard's balance and points", async () => {
  const code = await issuePass({ storecard_id: 'card-points' });
  await api(till, 'POST', '/passes/scan/storecard', {
    pass_code: code,
    type: 'earn',
    points: 120,
    transaction_reference: `${code}-1`,
  });
  await api(till, 'POST', '/passes/scan/storecard', {
    pass_code: code,
    type: 'spend',
    points: 20,
    transaction_reference: `${code}-2`,
  });
  const { page, problems } = await openRecorded(browser, await saveUrlOf(code), {
    viewport: PHONE,
    deviceScaleFactor: 2,
  });
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Acme Points');
  expect(await page.locator('[data-field="balance"]').textContent()).toBe('100');
  expect(await page.locator('[data-field="points"]').textContent()).toBe('120');
  expect(await decodeQr(page, 'storecard-save-qr.png')).toBe(code);
  await page.screenshot({ path: `${artifacts}storecard-save-phone.png`, fullPage: true });
  expect(problems).toEqual([]);
  await page.close();
});

it('shows a redeemed coupon without a code, and a changed link as a 400 page', async () => {
  const code = await issuePass({ coupon_id: 'coupon-welcome' });
  await api(till, 'POST', '/passes/scan', { pass_code: code });
  const url = await saveUrlOf(code);
  const redeemed = await openRecorded(browser, url, { viewport: PHONE, deviceScaleFactor: 2 });
  expect(await redeemed.page.locator('[data-field="state"]').textContent()).toBe('Inactive (redeemed)');
  expect(await redeemed.page.locator('svg.qr').count()).toBe(0);
  expect(await redeemed.page.locator('[data-field="no-code"]').textContent()).toMatch(/no code to scan/);
  await redeemed.page.screenshot({ path: `${artifacts}coupon-redeemed-save-phone.png`, fullPage: true });
  await redeemed.page.close();

  const prefix = url.slice(0, url.lastIndexOf('/') + 1);
  const [head, body, signature] = url.slice(prefix.length).split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as {
    payload: { offerObjects: { state: string }[] };
  };
  claims.payload.offerObjects[0]!.state = 'ACTIVE';
  const changed = `${prefix}${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  const bad = await openRecorded(browser, changed, { viewport: PHONE, deviceScaleFactor: 2 });
  expect(bad.response?.status()).toBe(400);
  expect(await bad.page.getByRole('heading', { level: 1 }).textContent()).toBe('This link does not verify');
  expect(await bad.page.locator('[data-field="problem"]').textContent()).toMatch(/signature does not match/);
  expect(await fitsWidth(bad.page)).toBe(true);
  await bad.page.screenshot({ path: `${artifacts}tampered-save-phone.png`, fullPage: true });
  await bad.page.close();
});
