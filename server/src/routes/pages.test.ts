import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';

let t: TestServer;
let admin: { authorization: string };
let dataDir: string;
beforeAll(async () => {
  // The wallet page's Google link is signed with the sandbox key of the data directory.
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-pages-'));
  t = await createTestServer({ dataDir });
  admin = await t.auth('acme-admin');
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

let n = 0;
async function issue(pass: { coupon_id: string } | { storecard_id: string }, brand = 'brand-acme') {
  const email = `wallet-${++n}@example.org`;
  const member = await t.inject({
    method: 'POST',
    url: '/members',
    headers: admin,
    payload: { brand_id: brand, email },
  });
  const memberId = JSON.parse(member.payload).member_id as string;
  const issued = await t.inject({
    method: 'POST',
    url: `/members/${memberId}/passes`,
    headers: admin,
    payload: { brand_id: brand, ...pass },
  });
  expect(issued.statusCode).toBe(201);
  const body = JSON.parse(issued.payload) as { pass_code: string; wallet_url: string };
  return { ...body, email, memberId };
}

const page = (url: string) => t.inject({ method: 'GET', url });

/** A redeemed or expired pass's page: no QR code, no wallet button, and the reason in words. */
function expectDeadPass(payload: string, why: RegExp) {
  expect(payload).not.toContain('<svg class="qr"');
  expect(payload).not.toContain('class="wallet-button"');
  expect(payload).not.toContain('/sandbox/google-wallet/save/');
  expect(payload).not.toContain('.pkpass');
  expect(payload).toMatch(why);
}

describe('GET /wallet/{code}', () => {
  it('is the page behind wallet_url: the pass, its QR code and status, with strict headers', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    const path = new URL(pass.wallet_url).pathname;
    expect(path).toBe(`/wallet/${pass.pass_code}`);
    const res = await page(path);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'unsafe-inline'; img-src data:/,
    );
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.payload).toContain('<h1 id="pass-title">Welcome 10% off</h1>');
    expect(res.payload).toContain('<p>Acme</p>');
    expect(res.payload).toMatch(
      /<svg class="qr" role="img" aria-labelledby="qr-title"[^>]*><title id="qr-title">QR code of pass [0-9A-Z]{16}<\/title>/,
    );
    expect(res.payload).toContain('data-status="active"');
    expect(res.payload).toContain(
      `<a class="wallet-button" href="/wallet/${pass.pass_code}.pkpass" data-action="apple-wallet"`,
    );
    expect(res.payload).toMatch(
      /<a class="wallet-button" href="\/sandbox\/google-wallet\/save\/ey[\w-]+\.[\w-]+\.[\w-]+" data-action="google-wallet"/,
    );
    expect(res.payload).toContain('<span data-field="button-state">active</span>');
    // Both buttons lead somewhere real: the .pkpass (part A's route) and the sandbox's save page.
    const apple = await page(`/wallet/${pass.pass_code}.pkpass`);
    expect(apple.statusCode).toBe(200);
    expect(apple.headers['content-type']).toBe('application/vnd.apple.pkpass');
    const google = /href="(\/sandbox\/google-wallet\/save\/[^"]+)"/.exec(res.payload)![1]!;
    expect((await page(google)).statusCode).toBe(200);
    expect(res.payload).toContain('preview of the card');
    expect(res.payload).toContain('<a href="/sandbox/wallet/ca.pem">ca.pem</a>');
    // Nothing of the member: no e-mail, no id.
    expect(res.payload).not.toContain(pass.email);
    expect(res.payload).not.toContain(pass.memberId);
    expect(res.payload).not.toMatch(/<script/i);
  });

  it('shows the status as the API computes it in SQL (expired after the expiration date, redeemed after a scan)', async () => {
    const expired = await issue({ coupon_id: 'coupon-welcome' });
    await t.db.sql`UPDATE passes SET expiration_date = DATE '2020-01-01' WHERE pass_code = ${expired.pass_code}`;
    const res = await page(`/wallet/${expired.pass_code}`);
    expect(res.payload).toContain('data-status="expired"');
    expect(res.payload).toContain('<time datetime="2020-01-01">2020-01-01</time>');

    const redeemed = await issue({ coupon_id: 'coupon-welcome' });
    const scan = await t.inject({
      method: 'POST',
      url: '/passes/scan',
      headers: await t.auth('acme-pos-1'),
      payload: { pass_code: redeemed.pass_code },
    });
    expect(scan.statusCode, scan.payload).toBe(200);
    expect((await page(`/wallet/${redeemed.pass_code}`)).payload).toContain('data-status="redeemed"');
  });

  it('shows a redeemed pass without a code to scan or wallet buttons, and says why', async () => {
    const redeemed = await issue({ coupon_id: 'coupon-welcome' });
    const before = await page(`/wallet/${redeemed.pass_code}`);
    expect(before.payload).toContain('<svg class="qr"');
    const scan = await t.inject({
      method: 'POST',
      url: '/passes/scan',
      headers: await t.auth('acme-pos-1'),
      payload: { pass_code: redeemed.pass_code },
    });
    expect(scan.statusCode, scan.payload).toBe(200);
    const res = await page(`/wallet/${redeemed.pass_code}`);
    expectDeadPass(
      res.payload,
      /This coupon was redeemed on <time datetime="\d{4}-\d{2}-\d{2}T[^"]+">\d{4}-\d{2}-\d{2}<\/time>: it has no code to scan/,
    );
  });

  it('shows points and balance of a storecard', async () => {
    const card = await issue({ storecard_id: 'card-points' });
    await t.db.sql`UPDATE passes SET points = 42, balance = 17 WHERE pass_code = ${card.pass_code}`;
    const res = await page(`/wallet/${card.pass_code}`);
    expect(res.payload).toContain('<dd data-field="points">42</dd>');
    expect(res.payload).toContain('<dd data-field="balance">17</dd>');
    expect(res.payload).toContain('Acme Points');
  });

  it('escapes what the data holds: a brand named <script> is text', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    await t.db
      .sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-xss', 'org-acme', ${'<script>alert(1)</script>&"'})`;
    await t.db.sql`UPDATE passes SET brand_id = 'brand-xss' WHERE pass_code = ${pass.pass_code}`;
    const res = await page(`/wallet/${pass.pass_code}`);
    expect(res.statusCode).toBe(200);
    expect(res.payload).not.toContain('<script>');
    expect(res.payload).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;');
  });

  it('answers an unknown, a lowercase or an overlong code with the 404 page', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' });
    for (const code of ['0000000000000000', pass.pass_code.toLowerCase(), 'x'.repeat(5000), '%3Cscript%3E']) {
      const res = await page(`/wallet/${code}`);
      expect(res.statusCode, code.slice(0, 20)).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.payload).toContain('<h1>Pass not found</h1>');
      expect(res.payload).not.toContain('<script>');
    }
  });
});

describe('GET /docs and its bundle', () => {
  it('links the bundle by a hashed name that is served with a year of cache; other names are 404', async () => {
    const docs = await page('/docs');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-security-policy']).toContain("script-src 'self'");
    const src = /<script src="(\/docs\/assets\/redoc\.standalone\.[0-9a-f]{12}\.js)"><\/script>/.exec(
      docs.payload,
    )?.[1];
    expect(src).toBeDefined();
    const bundle = await page(src!);
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(bundle.payload.length).toBeGreaterThan(500_000);
    expect(bundle.payload).not.toContain('cdn.redoc.ly');
    for (const name of ['redoc.standalone.js', 'package.json', '..%2F..%2Fpackage.json'])
      expect((await page(`/docs/assets/${name}`)).statusCode, name).toBe(404);
  });
});

describe('GET /', () => {
  it('links the docs, the document, /health and the quick start, with the server version', async () => {
    const res = await page('/');
    expect(res.statusCode).toBe(200);
    for (const href of ['/docs', '/openapi.yaml', '/health', '#quick-start'])
      expect(res.payload).toContain(`href="${href}"`);
    expect(res.payload).toMatch(/data-field="version">\d+\.\d+\.\d+/);
  });
});

// Last in the file: it moves acme's sandbox clock 40 days on, which ends every token issued before.
describe('GET /wallet/{code} after the sandbox clock passes the expiry', () => {
  it('shows the pass expired, without a code to scan or wallet buttons', async () => {
    const pass = await issue({ coupon_id: 'coupon-welcome' }); // valid 30 days
    expect((await page(`/wallet/${pass.pass_code}`)).payload).toContain('class="wallet-button"');
    const moved = await t.inject({
      method: 'POST',
      url: '/sandbox/clock',
      headers: admin,
      payload: { advance: '40d' },
    });
    expect(moved.statusCode, moved.payload).toBe(200);
    const res = await page(`/wallet/${pass.pass_code}`);
    expect(res.payload).toContain('data-status="expired"');
    expectDeadPass(
      res.payload,
      /This coupon expired after <time datetime="\d{4}-\d{2}-\d{2}">[^<]+<\/time>: it has no code to scan/,
    );
  });
});
