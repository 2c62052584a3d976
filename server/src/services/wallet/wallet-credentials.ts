import type { Config } from '../../config.js';
import { appleSigningOf } from './apple-signing.js';
import { serviceAccountOf } from './google-signer.js';

/**
 * The operator's wallet credentials, checked at start-up: a certificate, key or service-account
 * key that cannot sign stops the start with its error (which names the variable, never the key),
 * rather than failing the first pass download with a 500. Sandbox keys are made on first use.
 */
export async function checkWalletCredentials(config: Pick<Config, 'dataDir' | 'wallet'>): Promise<void> {
  if (config.wallet.apple) await appleSigningOf(config);
  if (config.wallet.google) serviceAccountOf(config.wallet.google.serviceAccount);
}
