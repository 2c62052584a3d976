import { readFileSync } from 'node:fs';
import Accept from '@hapi/accept';
import type { Request, ResponseToolkit } from '@hapi/hapi';
import QRCode from 'qrcode';
import { appOf } from '../context.js';
import { docsPage } from '../pages/docs.js';
import { docsBundle } from '../pages/docs-bundle.js';
import { landingPage } from '../pages/landing.js';
import { walletNotFoundPage, walletPage } from '../pages/wallet.js';
import { walletButtonsOf } from '../services/wallet/wallet-links.js';
import { findWalletPass } from '../services/wallet/wallet-pass.js';
import type { RouteDef } from './types.js';
import { PKPASS_TYPE, pkpassResponse } from './wallet-passes.js';

/** This package's version (server/package.json, found from src/ and dist/ alike). */
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The wallet page and the landing page load nothing: inline style, images as data URLs, no script. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** Redoc: its bundle from here, the document from here, the styles it injects, its search worker (a blob). */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; worker-src blob:; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function htmlResponse(h: ResponseToolkit, body: string, { status = 200, csp = PAGE_CSP } = {}) {
  return h
    .response(body)
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

/** Whether the request's Accept ranks an Apple pass above the page (a malformed header: the page). */
function prefersPkpass(request: Request): boolean {
  const accept = String(request.headers.accept ?? '');
  if (!accept.includes(PKPASS_TYPE)) return false;
  try {
    return Accept.mediaType(accept, ['text/html', PKPASS_TYPE]) === PKPASS_TYPE;
  } catch {
    return false;
  }
}

export const pageRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/',
    handler: (request, h) => htmlResponse(h, landingPage(VERSION, appOf(request).baseUrl().replace(/\/+$/, ''))),
  },
  {
    method: 'GET',
    path: '/wallet/{code}',
    handler: async (request, h) => {
      const pass = await findWalletPass(appOf(request).sql, request.params.code as string);
      if (!pass) return htmlResponse(h, walletNotFoundPage(), { status: 404 });
      if (prefersPkpass(request)) return pkpassResponse(appOf(request), h, pass);
      const qr = await QRCode.toString(pass.qr_code, { type: 'svg', margin: 4, errorCorrectionLevel: 'M' });
      return htmlResponse(h, walletPage(pass, qr, await walletButtonsOf(appOf(request), pass)));
    },
  },
  {
    method: 'GET',
    path: '/docs',
    handler: (_request, h) => htmlResponse(h, docsPage(`/docs/assets/${docsBundle().name}`), { csp: DOCS_CSP }),
  },
  {
    method: 'GET',
    path: '/docs/assets/{file}',
    handler: (request, h) => {
      const bundle = docsBundle();
      if (request.params.file !== bundle.name)
        return htmlResponse(h, '<!doctype html><title>Not found</title><p>Not found.</p>', { status: 404 });
      return h
        .response(bundle.body)
        .type('text/javascript; charset=utf-8')
        .etag(bundle.etag)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff');
    },
  },
];
