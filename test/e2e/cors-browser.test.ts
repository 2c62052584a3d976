// Issue 29: CORS from a page of another origin, in Debian's headless Chromium against the real
// server with LOYALTY_CORS_ORIGINS listing one origin. Two tiny page servers on other ports of
// 127.0.0.1 are two other origins: the listed one calls the API (a preflighted GET and POST) and
// reads its rate-limit and request-id headers; the other is blocked by the browser, and its
// preflighted POST never reaches the server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '#test-helpers/browser.js';
import { fetchToken, type LiveServer, startLiveServer } from '#test-helpers/live-server.js';

type Outcome =
  | { ok: true; status: number; limit: string | null; remaining: string | null; requestId: string | null }
  | { ok: false; error: string };

let live: LiveServer;
let browser: Browser;
let token: string;
const pages: Server[] = [];
let allowed: string;
let other: string;

/** A page server: every path answers an empty HTML page of its origin. */
async function pageServer(): Promise<string> {
  const server = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>other origin</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pages.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  [allowed, other] = await Promise.all([pageServer(), pageServer()]);
  live = await startLiveServer({ cors: { origins: [allowed], anyOrigin: false } }, { worker: false });
  token = await fetchToken(live.url, 'acme-admin');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await live?.close();
  await Promise.all(pages.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** Runs `fetch` in a page of `origin` against the API, as a web app of that origin would. */
async function fetchFrom(
  origin: string,
  path: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) {
  const page = await browser.newPage();
  try {
    await page.goto(`${origin}/`);
    return await page.evaluate(
      async ({ url, init }): Promise<Outcome> => {
        try {
          const res = await fetch(url, init);
          return {
            ok: true,
            status: res.status,
            limit: res.headers.get('x-ratelimit-limit'),
            remaining: res.headers.get('x-ratelimit-remaining'),
            requestId: res.headers.get('x-request-id'),
          };
        } catch (error) {
          return { ok: false, error: String(error) };
        }
      },
      { url: `${live.url}${path}`, init },
    );
  } finally {
    await page.close();
  }
}

const createTag = (name: string) => ({
  method: 'POST',
  headers: {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'idempotency-key': `cors-${name}`,
    'x-request-id': `cors-${name}`,
  },
  body: JSON.stringify({ brand_id: 'brand-acme', external_reference: name, tag: name }),
});

const tagNames = async () => {
  const res = await fetch(`${live.url}/tags?brand_id=brand-acme`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { data: { external_reference: string }[] }).data.map((t) => t.external_reference);
};

describe('a page of another origin calling the API in Chromium', () => {
  it('the listed origin reads an answer and its rate-limit and request-id headers', async () => {
    const read = await fetchFrom(allowed, '/tags?brand_id=brand-acme', {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read).toMatchObject({ ok: true, status: 200, limit: '100000', requestId: expect.any(String) });
    expect(Number((read as { remaining: string }).remaining)).toBeGreaterThan(0);

    const created = await fetchFrom(allowed, '/tags', createTag('cors-allowed'));
    expect(created).toMatchObject({ ok: true, status: 201, requestId: 'cors-cors-allowed' });
    expect(await tagNames()).toContain('cors-allowed');
  });

  it('another origin is blocked by the browser, and its preflighted POST never runs', async () => {
    const read = await fetchFrom(other, '/tags?brand_id=brand-acme', {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read).toEqual({ ok: false, error: expect.stringMatching(/Failed to fetch/) });
    const created = await fetchFrom(other, '/tags', createTag('cors-blocked'));
    expect(created).toEqual({ ok: false, error: expect.stringMatching(/Failed to fetch/) });
    expect(await tagNames()).not.toContain('cors-blocked');
  });
});
