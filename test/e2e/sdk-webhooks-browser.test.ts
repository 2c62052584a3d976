// The built `@loyalty/sdk/webhooks` (sdk/dist/webhooks.js, what the package's `./webhooks` export
// resolves to) in a real page of Debian's headless Chromium: it loads with no node: module and no
// Buffer, verifies a delivery signed by the server's signer with Web Crypto, rejects a tampered one
// with the right reason, and the page requests nothing but the SDK's own files. Needs `npm run build`.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { signDelivery } from '@loyalty/sdk/signing';
import { signPayload } from '@loyalty/sdk/webhooks';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { pointsChangedEvent } from '../../sdk/src/test-support.js';

const CHROMIUM = '/usr/bin/chromium';
const dist = fileURLToPath(new URL('../../sdk/dist/', import.meta.url));

let server: Server;
let origin: string;
let browser: Browser;
let page: Page;
/** Paths the local server was asked for, and every URL the page requested or failed to. */
const served: string[] = [];
const requested: string[] = [];
const failures: string[] = [];

// The page imports the SDK itself (a module script; the test file's own import() is rewritten by vite).
const html = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
import('/sdk/webhooks.js').then((m) => { window.webhooks = m; }, (e) => { window.loadError = String(e); });
</script></head><body></body></html>`;

/** The local server and the page. In the test, not in beforeAll: a missing chromium fails the test, never skips it. */
async function openPage() {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does).`);
  if (!existsSync(`${dist}webhooks-web.js`))
    throw new Error(`${dist}webhooks-web.js is missing: run npm run build first (npm test does).`);
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    served.push(path);
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    const file = /^\/sdk\/((?:internal\/)?[\w-]+\.js)$/.exec(path)?.[1];
    if (!file || !existsSync(dist + file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(dist + file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
  page = await browser.newPage();
  page.on('request', (r) => requested.push(r.url()));
  page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') failures.push(`console: ${m.text()}`);
  });
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => 'webhooks' in window || 'loadError' in window);
  expect(await page.evaluate(() => (window as { loadError?: string }).loadError)).toBeUndefined();
}

afterAll(async () => {
  await browser?.close();
  if (server) await new Promise((resolve) => server.close(resolve));
});

const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const previous = 'whsec_c29tZW90aGVyc2VjcmV0';
// The test suites' sample delivery, with a reference that is not ASCII (TextEncoder in the browser).
const body = JSON.stringify({
  ...pointsChangedEvent,
  created_at: '2026-11-24T10:00:00.000Z',
  data: { ...pointsChangedEvent.data, reference: 'till-1 · ü' },
});

interface Case {
  name: string;
  /** `constructEventAsync`, `verifyAsync` with the headers, or `verifyAsync` with the Loyalty-Signature value. */
  call: 'constructEventAsync' | 'verifyAsync' | 'verifyAsync:loyalty-signature' | 'constructEvent';
  body: string;
  /** Sent to the page as bytes (an ArrayBuffer) instead of a string. */
  asBytes?: boolean;
  headers: Record<string, string>;
  secret: string | string[];
  nowSeconds?: number;
}

/** Runs the cases in the page, with the module the page imports itself; returns what each gave. */
async function inPage(cases: Case[]) {
  return page.evaluate(async (cases) => {
    const wh = (window as unknown as { webhooks: typeof import('@loyalty/sdk/webhooks') }).webhooks;
    const results = [];
    for (const c of cases) {
      const raw = c.asBytes ? new TextEncoder().encode(c.body).buffer : c.body;
      const options = c.nowSeconds === undefined ? {} : { now: new Date(c.nowSeconds * 1000) };
      try {
        const value =
          c.call === 'verifyAsync:loyalty-signature'
            ? await wh.verifyAsync(raw, c.headers['loyalty-signature'], c.secret)
            : await wh[c.call](raw, c.headers, c.secret, options);
        results.push({ name: c.name, ok: true, type: (value as { type?: string } | undefined)?.type });
      } catch (e) {
        const err = e as Error & { reason?: string };
        results.push({
          name: c.name,
          ok: false,
          error: err.name,
          reason: err.reason,
          verificationError: err instanceof wh.WebhookVerificationError,
          message: err.message,
        });
      }
    }
    return {
      results,
      buffer: typeof (globalThis as { Buffer?: unknown }).Buffer,
      process: typeof (globalThis as { process?: unknown }).process,
      secure: globalThis.isSecureContext,
    };
  }, cases);
}

it('verifies a delivery with Web Crypto in Chromium and rejects a tampered one, loading no node-only module', async () => {
  await openPage();
  const now = Math.floor(Date.now() / 1000);
  const headers = signPayload({ body, secret, timestamp: now });
  const server = signDelivery(body, 'msg-1', now, [secret, previous]); // the server's signer, during a rotation
  const rotated = Object.fromEntries(Object.entries(server).map(([k, v]) => [k.toLowerCase(), v]));
  const tampered = body.replace('"points":5', '"points":500');
  const { results, ...env } = await inPage([
    { name: 'valid', call: 'constructEventAsync', body, headers, secret },
    { name: 'valid bytes', call: 'constructEventAsync', body, asBytes: true, headers, secret },
    { name: 'tampered', call: 'constructEventAsync', body: tampered, headers, secret },
    { name: 'loyalty', call: 'verifyAsync:loyalty-signature', body, headers, secret },
    { name: 'loyalty tampered', call: 'verifyAsync:loyalty-signature', body: tampered, headers, secret },
    { name: 'rotation, old secret', call: 'verifyAsync', body, headers: rotated, secret: previous },
    { name: 'rotation, both', call: 'constructEventAsync', body, headers: rotated, secret: [secret, previous] },
    { name: 'wrong secret', call: 'verifyAsync', body, headers, secret: previous },
    { name: 'stale', call: 'constructEventAsync', body, headers, secret, nowSeconds: now + 301 },
    { name: 'sync in a browser', call: 'constructEvent', body, headers, secret },
  ]);
  expect(env).toEqual({ buffer: 'undefined', process: 'undefined', secure: true });
  const byName = Object.fromEntries(results.map(({ name, ...r }) => [name, r]));
  expect(byName.valid).toEqual({ ok: true, type: 'points.changed' });
  expect(byName['valid bytes']).toEqual({ ok: true, type: 'points.changed' });
  expect(byName['rotation, old secret']).toEqual({ ok: true });
  expect(byName['rotation, both']).toEqual({ ok: true, type: 'points.changed' });
  expect(byName.loyalty).toEqual({ ok: true });
  for (const [name, reason] of [
    ['tampered', 'signature_mismatch'],
    ['loyalty tampered', 'signature_mismatch'],
    ['wrong secret', 'signature_mismatch'],
    ['stale', 'stale_timestamp'],
  ] as const)
    expect(byName[name], name).toMatchObject({
      ok: false,
      error: 'WebhookVerificationError',
      reason,
      verificationError: true,
    });
  // The synchronous functions need node:crypto: a clear error that names the function to use.
  expect(byName['sync in a browser']).toMatchObject({ ok: false, error: 'Error', verificationError: false });
  expect(byName['sync in a browser']?.message).toMatch(/constructEvent is synchronous.*constructEventAsync/);

  // Only the page and the SDK's own files, each found; nothing node-only, nothing failed.
  expect(failures).toEqual([]);
  expect(
    requested.every((url) => url.startsWith(`${origin}/`)),
    requested.join('\n'),
  ).toBe(true);
  expect([...new Set(served)].sort()).toEqual([
    '/',
    '/sdk/internal/encoding.js',
    '/sdk/internal/node-crypto.js',
    '/sdk/internal/webhook-input.js',
    '/sdk/signing.js',
    '/sdk/webhooks-web.js',
    '/sdk/webhooks.js',
  ]);
  for (const path of served.filter((p) => p.startsWith('/sdk/'))) {
    const source = readFileSync(dist + path.slice('/sdk/'.length), 'utf8');
    expect(source, path).not.toMatch(/^\s*(?:import|export)\s*(?:[\w*{}\s,]*from\s*)?['"]node:/m);
  }
});
