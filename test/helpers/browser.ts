import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page, type Response } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Debian's headless Chromium. A missing binary fails the calling test, never skips it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does).`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
}

/** Where the page tests keep their screenshots (git-ignored): test-artifacts/<name>/ in the repository. */
export function artifactsDir(name: string): string {
  const dir = fileURLToPath(new URL(`../../test-artifacts/${name}/`, import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

export type RecordedPage = {
  page: Page;
  response: Response | null;
  /** Every URL the page requested. */
  requests: string[];
  /** Failed requests, page errors, and console messages of the given kinds. */
  problems: string[];
};

/**
 * Opens `url` in a new page of `browser` and waits for its load event, recording every request it
 * makes and every problem: failed requests, uncaught errors, console messages of `consoleTypes`.
 */
export async function openRecorded(
  browser: Browser,
  url: string,
  {
    viewport,
    deviceScaleFactor,
    consoleTypes = ['error'],
  }: { viewport: { width: number; height: number }; deviceScaleFactor?: number; consoleTypes?: string[] },
): Promise<RecordedPage> {
  const page = await browser.newPage({ viewport, ...(deviceScaleFactor ? { deviceScaleFactor } : {}) });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (consoleTypes.includes(m.type())) problems.push(`console: ${m.text()}`);
  });
  const response = await page.goto(url, { waitUntil: 'load' });
  return { page, response, requests, problems };
}
