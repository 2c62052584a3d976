import { errors, type JSONWebKeySet, jwtVerify } from 'jose';
import type { WalletApp } from './wallet-app.js';
import type { SaveToWalletClaims } from './google-save-link.js';
import { sandboxGoogleKeyOf as sandboxKeyOf } from './google-sandbox-key.js';
import { SANDBOX_GOOGLE_ISSUER_EMAIL } from './google-signer.js';

/** GET /sandbox/google-wallet/jwks.json: the sandbox key's public half, so anyone can verify the sandbox's save links. */
export async function sandboxJwks(app: WalletApp): Promise<JSONWebKeySet> {
  return { keys: [(await sandboxKeyOf(app)).publicJwk] };
}

export type VerifiedSaveJwt =
  | { ok: true; claims: SaveToWalletClaims; header: Record<string, unknown> }
  | { ok: false; problem: string };

/** Longer than any link this server makes (LINK_LIMIT) by far: not read at all. */
const LONGEST_JWT = 8192;

/**
 * The save page's check of a link's JWT, as Google would check one: RS256 signed by the sandbox
 * key, `aud` google, `typ` savetowallet, the sandbox issuer, not expired when it says so, and a
 * payload with one offer or loyalty object. The problem is said in words for the page.
 */
export async function verifySandboxSaveJwt(app: WalletApp, jwt: string): Promise<VerifiedSaveJwt> {
  if (jwt.length > LONGEST_JWT)
    return { ok: false, problem: `The token is ${jwt.length} characters long: no save link is.` };
  const key = await sandboxKeyOf(app);
  try {
    const { payload, protectedHeader } = await jwtVerify(jwt, key.publicKey, {
      algorithms: ['RS256'],
      audience: 'google',
      issuer: SANDBOX_GOOGLE_ISSUER_EMAIL,
      requiredClaims: ['iat'],
    });
    if (payload.typ !== 'savetowallet') return { ok: false, problem: 'Its typ claim is not "savetowallet".' };
    const body = payload.payload as Record<string, unknown> | undefined;
    const objects = body?.offerObjects ?? body?.loyaltyObjects;
    if (!Array.isArray(objects) || objects.length !== 1)
      return { ok: false, problem: 'Its payload holds no offer or loyalty object.' };
    return {
      ok: true,
      claims: payload as unknown as SaveToWalletClaims,
      header: protectedHeader as Record<string, unknown>,
    };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  }
}

function problemOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The link has expired (its exp claim is in the past).';
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return 'Its signature does not match: the link was changed, or signed with another key than this sandbox’s.';
  if (error instanceof errors.JWTClaimValidationFailed) return `Its ${error.claim} claim is wrong (${error.reason}).`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'It is not signed with RS256.';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return 'It is not a signed JWT (three base64url parts with a JSON header and claims).';
  if (error instanceof errors.JOSEError) return `It does not verify (${error.code}).`;
  throw error;
}
