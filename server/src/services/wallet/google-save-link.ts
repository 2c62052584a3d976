import { SignJWT } from 'jose';
import type { WalletApp } from './wallet-app.js';
import type { Db } from '../../db/pool.js';
import { googleSignerOf, type GoogleSigner } from './google-signer.js';
import {
  DEFAULT_TEXT_LIMITS,
  saveToWalletPayload,
  type SaveToWalletPayload,
  type TextLimits,
} from './google-wallet-objects.js';
import type { WalletPass } from './wallet-pass.js';

/** Google's save link: this prefix and the signed JWT. */
export const GOOGLE_SAVE_PREFIX = 'https://pay.google.com/gp/v/save/';
/** The sandbox's own save page (routes/wallet-google.ts): it verifies the JWT and shows the card. */
export const SANDBOX_SAVE_PATH = '/sandbox/google-wallet/save/';
/**
 * Longest link: Google's save links are followed from e-mails, QR codes and SMS, and some
 * browsers and mail clients cut URLs past about 2,000 characters.
 */
export const LINK_LIMIT = 1800;

/** The claims of a save-to-wallet JWT (https://developers.google.com/wallet/reference/rest/v1/Jwt). */
export type SaveToWalletClaims = {
  iss: string;
  aud: 'google';
  typ: 'savetowallet';
  iat: number;
  origins: string[];
  payload: SaveToWalletPayload;
};

/**
 * The "Save to Google Wallet" link of a pass as it is now, or null when this server has no
 * Google signer (no issuer configured and not a sandbox). The JWT is a snapshot: it carries the
 * pass's state, points and balance when the link was made, and no expiry (Google's JWT has none).
 * `relative`: a sandbox link as a path of this server (for its own pages); Google's links are
 * always absolute. Brand and title are shortened until the link fits LINK_LIMIT, down to 4
 * characters each: only a public URL of some 450 characters or more makes a longer link.
 */
export async function googleSaveUrl(
  app: WalletApp,
  pass: WalletPass,
  { relative = false }: { relative?: boolean } = {},
): Promise<string | null> {
  const signer = await googleSignerOf(app);
  if (!signer) return null;
  const templateId = await templateIdOf(app.sql, pass.id);
  const absolutePrefix =
    signer.mode === 'google' ? GOOGLE_SAVE_PREFIX : `${app.baseUrl().replace(/\/+$/, '')}${SANDBOX_SAVE_PATH}`;
  const prefix = signer.mode === 'sandbox' && relative ? SANDBOX_SAVE_PATH : absolutePrefix;
  let limits: TextLimits = DEFAULT_TEXT_LIMITS;
  for (;;) {
    const jwt = await signSaveJwt(signer, saveToWalletPayload(signer.issuerId, pass, templateId, limits));
    // The budget is the absolute link's, so a relative link fits too once made absolute.
    if (absolutePrefix.length + jwt.length <= LINK_LIMIT || limits.brand + limits.title <= 8) return prefix + jwt;
    limits = {
      brand: Math.max(4, Math.floor(limits.brand * 0.75)),
      title: Math.max(4, Math.floor(limits.title * 0.75)),
    };
  }
}

async function signSaveJwt(signer: GoogleSigner, payload: SaveToWalletPayload): Promise<string> {
  const claims: Omit<SaveToWalletClaims, 'iat'> = {
    iss: signer.email,
    aud: 'google',
    typ: 'savetowallet',
    origins: [],
    payload,
  };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: signer.kid })
    .setIssuedAt()
    .sign(signer.privateKey);
}

/** The pass's coupon or storecard id: it names the Google class. */
async function templateIdOf(db: Db, passId: string): Promise<string> {
  const [row] = await db<
    { id: string }[]
  >`SELECT COALESCE(coupon_id, storecard_id) AS id FROM passes WHERE id = ${passId}`;
  return row?.id ?? passId;
}
