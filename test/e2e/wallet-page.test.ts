// The wallet page behind every pass's wallet_url (GET /wallet/{code}) in Debian's headless
// Chromium against the real server: it renders at phone and desktop widths, its QR code decodes
// (jsQR on a screenshot) to the pass's qr_code, it follows a redemption and a storecard's balance,
// an unknown code gets the 404 page, the page requests nothing but itself, it passes basic
// accessibility checks, and a brand named with markup stays text. Screenshots are kept in
// test-artifacts/wallet/.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import jsQRModule from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { artifactsDir, launchChromium, openRecorded } from '#test-helpers/browser.js';
import { fetchToken, type LiveServer, startLiveServer } from '#test-helpers/live-server.js';

/** jsqr is CommonJS with `exports.default`: under NodeNext its default import is the module object. */
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as typeof jsQRModule.default;

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

let live: LiveServer;
let admin: string;
let till: string;
let browser: Browser | undefined;
let dataDir: string;
const artifacts = artifactsDir('wallet');

beforeAll(async () => {
  // The page's Google link is signed with the sandbox key of the data directory: a throwaway one.
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-wallet-page-'));
  live = await startLiveServer({ sandbox: true, dataDir }, { worker: false });
  admin = await fetchToken(live.url, 'acme-admin');
  till = await fetchToken(live.url, 'acme-pos-1');
  console.info(`wallet page screenshots: ${artifacts}`);
});
afterAll(async () => {
  await browser?.close();
  await live?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function api(token: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${live.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

let n = 0;
/** A new member with one pass; the pass's qr_code as the member's coupons/storecards list gives it. */
async function issuePass(pass: { coupon_id: string } | { storecard_id: string }) {
  const email = `wallet-page-${++n}@example.org`;
  const member = await api(admin, 'POST', '/members', { brand_id: 'brand-acme', email, first_name: 'Wanda' });
  const memberId = member.member_id as string;
  const issued = await api(admin, 'POST', `/members/${memberId}/passes`, { brand_id: 'brand-acme', ...pass });
  const list = 'coupon_id' in pass ? 'coupons' : 'storecards';
  const res = await fetch(`${live.url}/members/${memberId}/${list}?brand_id=brand-acme`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  const [item] = ((await res.json()) as { data: { qr_code: string }[] }).data;
  return { code: issued.pass_code as string, walletUrl: issued.wallet_url as string, qrCode: item!.qr_code, email };
}

type Visit = { page: Page; status: number; html: string; requests: string[]; problems: string[]; loadMs: number };

/** Opens a URL in a fresh page of the given size, recording every request and every console error. */
async function visit(url: string, viewport = PHONE): Promise<Visit> {
  browser ??= await launchChromium();
  const { page, response, requests, problems } = await openRecorded(browser, url, {
    viewport,
    deviceScaleFactor: 2,
    consoleTypes: ['error', 'warning'],
  });
  const loadMs = await page.evaluate(() => {
    const [nav] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
    return nav ? nav.loadEventEnd - nav.startTime : Number.NaN;
  });
  return { page, status: response?.status() ?? 0, html: (await response?.text()) ?? '', requests, problems, loadMs };
}

/** The QR code as a camera would see it: a screenshot of the element, decoded with jsQR. */
async function decodeQr(page: Page, file: string): Promise<string | undefined> {
  const png = await page.locator('svg.qr').screenshot({ path: `${artifacts}${file}` });
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data;
}

/** Text whose colour has less than WCAG AA contrast (4.5:1, 3:1 for large text) against its background. */
async function lowContrast(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number) as number[];
    const luminance = ([r, g, b]: number[]) => {
      const [R, G, B] = [r!, g!, b!].map((v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * R! + 0.7152 * G! + 0.0722 * B!;
    };
    const background = (el: Element | null): number[] => {
      for (; el; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3]! > 0)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const bad: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      const own = [...el.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent?.trim());
      if (!own || !(el as HTMLElement).offsetParent) continue;
      const style = getComputedStyle(el);
      const l1 = luminance(rgb(style.color));
      const l2 = luminance(background(el));
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      const size = Number.parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5))
        bad.push(`${el.tagName} "${el.textContent?.trim().slice(0, 30)}": ${ratio.toFixed(2)}`);
    }
    return bad;
  });
}

it('renders a coupon pass at phone and desktop widths; the QR code decodes to its qr_code; nothing but the page is requested', async () => {
  const pass = await issuePass({ coupon_id: 'coupon-welcome' });
  expect(new URL(pass.walletUrl).pathname).toBe(`/wallet/${pass.code}`);
  const url = `${live.url}/wallet/${pass.code}`;
  for (const [name, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    const v = await visit(url, viewport);
    expect(v.status).toBe(200);
    await v.page.screenshot({ path: `${artifacts}coupon-${name}.png`, fullPage: true });
    expect(await decodeQr(v.page, `coupon-${name}-qr.png`), `${name}: the QR code`).toBe(pass.qrCode);
    expect(v.requests, 'the page requests nothing but itself').toEqual([url]);
    expect(v.problems).toEqual([]);
    // Fits the width: no sideways scrolling on a phone.
    expect(await v.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await v.page.getByRole('heading', { level: 1 }).textContent()).toBe('Welcome 10% off');
    const text = (await v.page.locator('body').textContent()) ?? '';
    expect(text).toContain('Acme');
    expect(text).toContain(pass.code.match(/.{4}/g)!.join(' '));
    expect(await v.page.locator('[data-status]').textContent()).toBe('active');
    expect(text).toMatch(/Expires\s*\d{4}-\d{2}-\d{2}/);
    expect(text, 'nothing of the member').not.toContain(pass.email);
    expect(text).not.toContain('Wanda');
    console.info(
      `wallet page (${name} ${viewport.width}x${viewport.height}): ${Buffer.byteLength(v.html)} bytes of HTML, load event after ${v.loadMs.toFixed(0)} ms`,
    );
    await v.page.close();
  }
});

it('passes basic accessibility checks: lang, one h1, a named QR image, wallet links described by the pass state, AA contrast', async () => {
  const pass = await issuePass({ coupon_id: 'coupon-welcome' });
  const { page } = await visit(`${live.url}/wallet/${pass.code}`);
  expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
  expect(await page.locator('h1').count()).toBe(1);
  await expect.poll(() => page.getByRole('img', { name: `QR code of pass ${pass.code}` }).count()).toBe(1);
  for (const [name, href] of [
    ['Add to Apple Wallet', new RegExp(`^/wallet/${pass.code}\\.pkpass$`)],
    ['Save to Google Wallet', /^\/sandbox\/google-wallet\/save\/ey/],
  ] as const) {
    const link = page.getByRole('link', { name });
    expect(await link.count(), name).toBe(1);
    expect(await link.getAttribute('href')).toMatch(href);
    const description = await link.evaluate(
      (el) => document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent ?? '',
    );
    expect(description).toMatch(/^Adds this coupon as it is now: active, valid through \d{4}-\d{2}-\d{2}\.$/);
  }
  expect(await lowContrast(page)).toEqual([]);
  await page.close();
});

it('shows a redeemed coupon as redeemed and a storecard with its points and balance after scans', async () => {
  const coupon = await issuePass({ coupon_id: 'coupon-welcome' });
  await api(till, 'POST', '/passes/scan', { pass_code: coupon.code });
  const redeemed = await visit(`${live.url}/wallet/${coupon.code}`);
  expect(await redeemed.page.locator('[data-status]').textContent()).toBe('redeemed');
  expect(await redeemed.page.locator('body').textContent()).toMatch(/Redeemed\s*\d{4}-\d{2}-\d{2}/);
  expect(await redeemed.page.locator('svg.qr').count(), 'a redeemed coupon has no code to scan').toBe(0);
  expect(await redeemed.page.getByRole('link', { name: /Wallet/ }).count()).toBe(0);
  expect(await redeemed.page.locator('[data-field="no-code"]').textContent()).toMatch(/^This coupon was redeemed on/);
  await redeemed.page.screenshot({ path: `${artifacts}coupon-redeemed-phone.png`, fullPage: true });
  await redeemed.page.close();

  const card = await issuePass({ storecard_id: 'card-points' });
  await api(till, 'POST', '/passes/scan/storecard', {
    pass_code: card.code,
    type: 'earn',
    points: 50,
    transaction_reference: 'receipt-1',
  });
  await api(till, 'POST', '/passes/scan/storecard', {
    pass_code: card.code,
    type: 'spend',
    points: 20,
    transaction_reference: 'receipt-2',
  });
  for (const [name, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    const v = await visit(`${live.url}/wallet/${card.code}`, viewport);
    expect(await v.page.getByRole('heading', { level: 1 }).textContent()).toBe('Acme Points');
    expect(await v.page.locator('[data-field="points"]').textContent()).toBe('50');
    expect(await v.page.locator('[data-field="balance"]').textContent()).toBe('30');
    expect(await v.page.locator('[data-status]').textContent()).toBe('active');
    expect(await decodeQr(v.page, `storecard-${name}-qr.png`)).toBe(card.qrCode);
    await v.page.screenshot({ path: `${artifacts}storecard-${name}.png`, fullPage: true });
    expect(v.requests).toEqual([`${live.url}/wallet/${card.code}`]);
    await v.page.close();
  }
});

it('follows the sandbox clock: a coupon shows expired once the clock passes its expiration date', async () => {
  const pass = await issuePass({ coupon_id: 'coupon-welcome' }); // valid 30 days
  const url = `${live.url}/wallet/${pass.code}`;
  const before = await visit(url);
  expect(await before.page.locator('[data-status]').textContent()).toBe('active');
  await before.page.close();
  await api(admin, 'POST', '/sandbox/clock', { advance: '40d' });
  // Tokens live an hour of sandbox time: the ones issued before the jump have expired.
  admin = await fetchToken(live.url, 'acme-admin');
  till = await fetchToken(live.url, 'acme-pos-1');
  const after = await visit(url);
  expect(await after.page.locator('[data-status]').textContent()).toBe('expired');
  expect(await after.page.locator('svg.qr').count(), 'an expired coupon has no code to scan').toBe(0);
  expect(await after.page.getByRole('link', { name: /Wallet/ }).count()).toBe(0);
  expect(await after.page.locator('[data-field="no-code"]').textContent()).toMatch(/^This coupon expired after/);
  await after.page.screenshot({ path: `${artifacts}coupon-expired-phone.png`, fullPage: true });
  await after.page.close();
});

it('answers an unknown code with the 404 page', async () => {
  const url = `${live.url}/wallet/0000000000000000`;
  const v = await visit(url);
  expect(v.status).toBe(404);
  expect(await v.page.getByRole('heading', { level: 1 }).textContent()).toBe('Pass not found');
  expect(v.requests).toEqual([url]);
  await v.page.screenshot({ path: `${artifacts}not-found-phone.png`, fullPage: true });
  await v.page.close();
});

it('keeps markup in the data inert: a brand named <script> is shown as text and runs nothing', async () => {
  const pass = await issuePass({ coupon_id: 'coupon-welcome' });
  const name = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">Evil';
  await live.db.sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-markup', 'org-acme', ${name})`;
  await live.db.sql`UPDATE passes SET brand_id = 'brand-markup' WHERE pass_code = ${pass.code}`;
  const v = await visit(`${live.url}/wallet/${pass.code}`);
  expect(v.status).toBe(200);
  expect(await v.page.locator('.brand p').textContent()).toBe(name);
  expect(await v.page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
  expect(await v.page.locator('script, img').count()).toBe(0);
  expect(v.requests).toEqual([`${live.url}/wallet/${pass.code}`]);
  expect(v.problems).toEqual([]);
  await v.page.screenshot({ path: `${artifacts}markup-brand-phone.png`, fullPage: true });
  await v.page.close();
});
