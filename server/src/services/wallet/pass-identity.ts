import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * How an Apple Wallet pass of this server names itself, shared by the pass builder (pass.json)
 * and the pass-update web service (services/wallet/apple-web-service*.ts), so both agree without
 * storing anything per pass: a voucher job of 100,000 passes writes no wallet row.
 */

/** The sandbox's pass type and team: what its generated pass-signing certificate is made for. */
export const SANDBOX_PASS_TYPE_ID = 'pass.dev.loyalty.sandbox';
export const SANDBOX_TEAM_ID = 'LOYALTYSBX';

/** Where the pass-update web service lives under the server's base URL: pass.json's `webServiceURL` (Apple appends `/v1/…`). */
export const APPLE_WEB_SERVICE_PATH = '/wallet/apple';

export const webServiceUrlOf = (baseUrl: string) => `${baseUrl.replace(/\/+$/, '')}${APPLE_WEB_SERVICE_PATH}`;

/** A pass's serialNumber is its id (a UUID, unique across organizations). */
export const serialNumberOf = (passId: string) => passId;

/**
 * A pass's `authenticationToken`: an HMAC of its id under the server's secret key, 43 characters
 * (Apple asks for at least 16). Derived, never stored; a new secret key changes every token, as
 * a re-issued pass would.
 */
export function authenticationTokenOf(secretKey: string, passId: string): string {
  return createHmac('sha256', secretKey).update(`apple-wallet-authentication-token:${passId}`).digest('base64url');
}

/** Whether `presented` (the `ApplePass …` header's token) is this pass's token, compared in constant time. */
export function authenticationTokenMatches(secretKey: string, passId: string, presented: string): boolean {
  const expected = Buffer.from(authenticationTokenOf(secretKey, passId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
