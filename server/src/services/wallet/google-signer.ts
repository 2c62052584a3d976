import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { WalletApp } from './wallet-app.js';
import { sandboxGoogleKeyOf } from './google-sandbox-key.js';

/** The sandbox's Google Wallet issuer: a fixed number in the shape of Google's issuer ids (no real issuer has it). */
export const SANDBOX_GOOGLE_ISSUER_ID = '3388000000099999999';
/** The sandbox signer's `iss`: a service account's e-mail in shape, at a reserved name that is nobody's. */
export const SANDBOX_GOOGLE_ISSUER_EMAIL = 'google-wallet@sandbox.loyalty.invalid';

/** Who signs the save links: the operator's service account (real links), or the sandbox's key (links to this server's save page). */
export type GoogleSigner = {
  mode: 'google' | 'sandbox';
  issuerId: string;
  /** The JWT's `iss`: the service account's e-mail. */
  email: string;
  privateKey: KeyObject;
  /** The JWT header's `kid`: the service account key's `private_key_id`, or the sandbox key's thumbprint. */
  kid: string;
};

const signers = new WeakMap<WalletApp, Promise<GoogleSigner | undefined>>();

/**
 * The signer of this server's Google Wallet links, made once per server: with
 * config.wallet.google the operator's service account; otherwise, in sandbox mode, the sandbox
 * key of the data directory; otherwise none (no Google links: nothing could open them).
 */
export function googleSignerOf(app: WalletApp): Promise<GoogleSigner | undefined> {
  let signer = signers.get(app);
  if (!signer) {
    signer = makeSigner(app);
    // A failure (an unreadable key) is not kept: the next request tries again.
    signer.catch(() => signers.delete(app));
    signers.set(app, signer);
  }
  return signer;
}

async function makeSigner(app: WalletApp): Promise<GoogleSigner | undefined> {
  const google = app.config.wallet.google;
  if (google) return { mode: 'google', issuerId: google.issuerId, ...serviceAccountOf(google.serviceAccount) };
  if (!app.config.sandbox) return undefined;
  const key = await sandboxGoogleKeyOf(app);
  return {
    mode: 'sandbox',
    issuerId: SANDBOX_GOOGLE_ISSUER_ID,
    email: SANDBOX_GOOGLE_ISSUER_EMAIL,
    privateKey: key.privateKey,
    kid: key.kid,
  };
}

const VARIABLE = 'LOYALTY_GOOGLE_WALLET_SERVICE_ACCOUNT';

/**
 * A service account's JSON key (Google Cloud console → service account → Keys → JSON), given as
 * its text or as a file's path. Errors name the variable and the missing field, never the content.
 */
export function serviceAccountOf(textOrPath: string): Pick<GoogleSigner, 'email' | 'privateKey' | 'kid'> {
  const text = textOrPath.trimStart().startsWith('{') ? textOrPath : readServiceAccountFile(textOrPath);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${VARIABLE} is not a service account's JSON key (not JSON)`);
  }
  const field = (name: string) => {
    const value = json[name];
    if (typeof value !== 'string' || !value)
      throw new Error(`${VARIABLE} has no ${name}: is it a service account's JSON key?`);
    return value;
  };
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(field('private_key'));
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(VARIABLE)) throw error;
    throw new Error(`${VARIABLE}'s private_key is not a PEM private key`);
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error(`${VARIABLE}'s private_key is not an RSA key`);
  return { email: field('client_email'), kid: field('private_key_id'), privateKey };
}

function readServiceAccountFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${VARIABLE}: cannot read the file ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
}
