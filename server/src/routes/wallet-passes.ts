import type { ResponseToolkit } from '@hapi/hapi';
import { appOf } from '../context.js';
import type { AppContext } from '../context.js';
import { DomainError, notFound } from '../services/platform/errors.js';
import { appleSigningOf } from '../services/wallet/apple-signing.js';
import { pkpassBodyOf, pkpassVersionOf } from '../services/wallet/pkpass.js';
import { findWalletPass, type WalletPass } from '../services/wallet/wallet-pass.js';
import type { RouteDef } from './types.js';

export const PKPASS_TYPE = 'application/vnd.apple.pkpass';

/**
 * A pass's `.pkpass` with its validators: 304 when the request's If-None-Match (or, without it,
 * If-Modified-Since) names this version, before anything is signed. `private, no-cache`: the
 * pass changes (points, redeemed, expiry), so a cache asks every time, and only the member's.
 * Also answers GET /wallet/{code} when its Accept prefers a pass (routes/pages.ts).
 */
export async function pkpassResponse(app: AppContext, h: ResponseToolkit, pass: WalletPass) {
  const version = await pkpassVersionOf(app, pass);
  const headers = (response: ReturnType<ResponseToolkit['response']>) =>
    response.header('cache-control', 'private, no-cache').header('x-content-type-options', 'nosniff').vary('accept');
  // hapi's conditional check (strong ETag comparison, then If-Modified-Since); it quotes the tag itself.
  const notModified = h.entity({ etag: version.etag.slice(1, -1), modified: version.lastModified.toUTCString() });
  if (notModified) return headers(notModified);
  return headers(h.response(pkpassBodyOf(version)).type(PKPASS_TYPE));
}

export const walletPassRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/wallet/{code}.pkpass',
    // Every process signs its own copy (the signing time differs): no byte ranges across copies.
    options: { response: { ranges: false } },
    handler: async (request, h) => {
      const app = appOf(request);
      const pass = await findWalletPass(app.sql, request.params.code as string);
      if (!pass) throw notFound('Pass');
      return pkpassResponse(app, h, pass);
    },
  },
  {
    method: 'GET',
    path: '/sandbox/wallet/ca.pem',
    handler: async (request, h) => {
      const signing = await appleSigningOf(appOf(request).config);
      // With the operator's certificates there is no sandbox CA: passes chain to Apple's WWDR.
      if (!signing.sandboxCa)
        throw new DomainError(
          'not_found',
          'not_found',
          "No sandbox CA: passes are signed with the operator's Apple certificate.",
        );
      return h
        .response(signing.sandboxCa)
        .type('application/x-pem-file')
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff');
    },
  },
];
