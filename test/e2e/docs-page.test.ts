// GET /docs and GET / in Debian's headless Chromium against the real server: Redoc renders
// openapi.yaml from this server alone (its bundle and the document, nothing elsewhere), and every
// operation and every webhook of the document is on the rendered page; the landing page's links
// work. A screenshot is kept in test-artifacts/docs/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listOperations, loadOpenApi } from '../../server/src/lib/openapi.js';
import { artifactsDir, launchChromium, openRecorded } from '#test-helpers/browser.js';
import { type LiveServer, startLiveServer } from '#test-helpers/live-server.js';

let live: LiveServer;
let browser: Browser | undefined;
const artifacts = artifactsDir('docs');

beforeAll(async () => {
  live = await startLiveServer({}, { worker: false });
  console.info(`docs page screenshots: ${artifacts}`);
});
afterAll(async () => {
  await browser?.close();
  await live?.close();
});

async function open(path: string): Promise<{ page: Page; requests: string[]; problems: string[] }> {
  browser ??= await launchChromium();
  return openRecorded(browser, `${live.url}${path}`, { viewport: { width: 1280, height: 800 } });
}

it('renders every operation and every webhook of openapi.yaml, loading nothing from elsewhere', async () => {
  const started = Date.now();
  const { page, requests, problems } = await open('/docs');
  // Redoc renders the whole document into the page (no lazy sections): wait for the last webhook's section.
  await page.waitForSelector('[data-section-id^="tag/"]', { timeout: 60_000 });
  await page.waitForFunction(() => document.querySelectorAll('[data-section-id*="operation/"]').length > 0, null, {
    timeout: 60_000,
  });
  const rendered = Date.now() - started;
  // Each operation and webhook is a section of its own (Redoc's id ends in operation/<operationId>)
  // whose text holds its summary.
  const sections = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('[data-section-id*="operation/"]')].map((el) => [
        el.getAttribute('data-section-id')?.replace(/^.*operation\//, ''),
        el.textContent ?? '',
      ]),
    ),
  );
  const { document: spec } = loadOpenApi();
  const operations = listOperations(spec).map((op) => ({
    name: `${op.method} ${op.path}`,
    operationId: op.operationId,
    summary: op.raw.summary as string,
  }));
  const webhooks = Object.entries(
    spec.webhooks as Record<string, Record<string, { operationId: string; summary: string }>>,
  ).flatMap(([name, item]) => Object.values(item).map((op) => ({ name: `webhook ${name}`, ...op })));
  expect(operations.length).toBeGreaterThan(40);
  expect(webhooks.length).toBeGreaterThanOrEqual(4);
  const missing = [...operations, ...webhooks]
    .filter(({ operationId, summary }) => !sections[operationId]?.includes(summary))
    .map(({ name, operationId, summary }) => `${name} (${operationId}): "${summary}"`);
  expect(missing, 'operations and webhooks not on the rendered page').toEqual([]);
  await page.screenshot({ path: `${artifacts}docs-desktop.png` });
  await page
    .locator('[data-section-id="tag/Webhook-events/operation/onCouponRedeemed"]')
    .evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: `${artifacts}docs-webhook-coupon-redeemed.png` });

  const own = (url: string) => url.startsWith(`${live.url}/`);
  expect(requests.filter((url) => !own(url) && !url.startsWith('data:') && !url.startsWith('blob:'))).toEqual([]);
  const paths = requests.filter(own).map((url) => new URL(url).pathname);
  expect(paths).toHaveLength(3);
  expect(paths).toEqual(
    expect.arrayContaining([
      '/docs',
      '/openapi.yaml',
      expect.stringMatching(/^\/docs\/assets\/redoc\.standalone\.[0-9a-f]{12}\.js$/),
    ]),
  );
  expect(problems).toEqual([]);
  console.info(
    `/docs: ${operations.length} operations and ${webhooks.length} webhooks rendered ${rendered} ms after navigation`,
  );
  await page.close();
});

it('the landing page shows the version and its links work', async () => {
  const { page, requests, problems } = await open('/');
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Loyalty reference server');
  expect(await page.locator('[data-field="version"]').textContent()).toMatch(/^\d+\.\d+\.\d+/);
  await page.screenshot({ path: `${artifacts}landing-desktop.png`, fullPage: true });
  const links = await page.locator('a[href]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
  expect(links.map((href) => new URL(href).pathname + new URL(href).hash)).toEqual([
    '/docs',
    '/openapi.yaml',
    '/health',
    '/#quick-start',
  ]);
  for (const href of links.filter((h) => !h.includes('#'))) {
    const res = await fetch(href);
    expect(res.status, href).toBe(200);
  }
  expect(await page.locator('#quick-start').count()).toBe(1);
  expect(requests).toEqual([`${live.url}/`]);
  expect(problems).toEqual([]);
  await page.close();
});
