import QRCode from 'qrcode';
import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { googleWalletSaveErrorPage, googleWalletSavePage } from '../pages/google-wallet-save.js';
import { notFound } from '../services/platform/errors.js';
import { sandboxJwks, verifySandboxSaveJwt } from '../services/wallet/google-sandbox-save.js';
import { walletLinksOf } from '../services/wallet/wallet-links.js';
import { findWalletPass } from '../services/wallet/wallet-pass.js';
import { htmlResponse } from './pages.js';
import type { RouteDef } from './types.js';

/**
 * Google Wallet (issue 28): a pass's wallet links, and in sandbox mode the save page that stands
 * in for Google's and the key set that verifies the sandbox's links.
 */
export const walletGoogleRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/wallet/{code}/links',
    handler: async (request, h) => {
      const app = appOf(request);
      const pass = await findWalletPass(app.sql, request.params.code as string);
      if (!pass) throw notFound('Pass');
      const body: Schemas['WalletLinksResponse'] = { success: true, data: await walletLinksOf(app, pass) };
      return h.response(body).header('cache-control', 'no-store');
    },
  },
  {
    method: 'GET',
    path: '/sandbox/google-wallet/jwks.json',
    handler: async (request) => sandboxJwks(appOf(request)),
  },
  {
    method: 'GET',
    path: '/sandbox/google-wallet/save/{jwt}',
    handler: async (request, h) => {
      const verified = await verifySandboxSaveJwt(appOf(request), request.params.jwt as string);
      if (!verified.ok) return htmlResponse(h, googleWalletSaveErrorPage(verified.problem), { status: 400 });
      const p = verified.claims.payload;
      const object = 'offerObjects' in p ? p.offerObjects[0] : p.loyaltyObjects[0];
      const qr =
        object.state === 'ACTIVE' && typeof object.barcode?.value === 'string'
          ? await QRCode.toString(object.barcode.value, { type: 'svg', margin: 4, errorCorrectionLevel: 'M' })
          : undefined;
      return htmlResponse(h, googleWalletSavePage(verified.claims, verified.header, qr));
    },
  },
];
