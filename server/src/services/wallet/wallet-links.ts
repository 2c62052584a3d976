import type { WalletApp } from './wallet-app.js';
import { walletUrl } from '../../lib/pass-codes.js';
import type { Schemas } from '../../lib/schemas.js';
import { googleSaveUrl } from './google-save-link.js';
import type { WalletPass } from './wallet-pass.js';

/** Where a pass can be added to a wallet: GET /wallet/{code}/links and the wallet page's buttons. */
export type WalletLinks = Schemas['WalletLinks'];

/** The `.pkpass` of a pass (GET /wallet/{code}.pkpass). */
export const pkpassUrl = (baseUrl: string, passCode: string) => `${walletUrl(baseUrl, passCode)}.pkpass`;

/**
 * The pass's links. `relative`: this server's own links as paths (the wallet page links them
 * so, whatever host the member reached it by); Google's links stay absolute.
 */
export async function walletLinksOf(
  app: WalletApp,
  pass: WalletPass,
  { relative = false }: { relative?: boolean } = {},
): Promise<WalletLinks> {
  const base = relative ? '' : app.baseUrl();
  return {
    wallet_url: walletUrl(base, pass.pass_code),
    pkpass_url: pkpassUrl(base, pass.pass_code),
    google_save_url: await googleSaveUrl(app, pass, { relative }),
  };
}

/** The wallet page's buttons: their targets, and whether they lead to the sandbox's signatures (which no phone trusts) rather than the operator's. */
export type WalletButtons = {
  links: Pick<WalletLinks, 'pkpass_url' | 'google_save_url'>;
  sandboxes: { apple: boolean; google: boolean };
  /** Whether the sandbox's routes (its CA certificate, its Google save page) are served. */
  sandboxMode: boolean;
};

/** The wallet page's buttons of a pass; an inactive pass shows none, so no link is made for it. */
export async function walletButtonsOf(app: WalletApp, pass: WalletPass): Promise<WalletButtons> {
  const sandboxes = { apple: !app.config.wallet.apple, google: !app.config.wallet.google };
  const sandboxMode = app.config.sandbox;
  if (pass.status !== 'active') return { links: { pkpass_url: '', google_save_url: null }, sandboxes, sandboxMode };
  return { links: await walletLinksOf(app, pass, { relative: true }), sandboxes, sandboxMode };
}
