import type { Config } from '../../config.js';
import { defined } from '../../lib/defined.js';
import { DomainError } from '../platform/errors.js';
import { authenticationTokenMatches, SANDBOX_PASS_TYPE_ID } from './pass-identity.js';
import type { WalletPass } from './wallet-pass.js';

/**
 * The checks of Apple's pass-update web service (routes/wallet-apple.ts): which pass type this
 * server signs, and whether a request's `Authorization: ApplePass <authenticationToken>` is the
 * pass's own token (compared in constant time; the token is derived from the pass id and the
 * server's secret key, pass-identity.ts, and stored nowhere).
 */

/** The pass type of every pass this server signs: the operator's, or the sandbox's. */
export const passTypeIdOf = (config: Pick<Config, 'wallet'>): string =>
  config.wallet.apple?.passTypeId ?? SANDBOX_PASS_TYPE_ID;

/** A path's pass type must be this server's: any other is a pass type it knows nothing of (404 naming it). */
export function checkPassType(config: Pick<Config, 'wallet'>, passTypeIdentifier: string): void {
  if (passTypeIdentifier !== passTypeIdOf(config))
    throw new DomainError('not_found', 'not_found', 'No pass of this passTypeIdentifier is served here.', {
      fields: { passTypeIdentifier: ['The passTypeIdentifier is not the pass type of this server.'] },
    });
}

const unauthorized = () =>
  new DomainError(
    'unauthenticated',
    'unauthenticated',
    'The Authorization header must be "ApplePass <authenticationToken>" with the authenticationToken of this pass.',
  );

/** The token of an `Authorization: ApplePass <token>` header; undefined when the header has another form. */
export function applePassToken(header: string | undefined): string | undefined {
  const m = /^ApplePass ([\x21-\x7e]{1,200})$/.exec(header ?? '');
  return m?.[1];
}

/**
 * The pass the request is about, when its ApplePass token is that pass's: otherwise 401, the same
 * for an unknown serial number as for a wrong token (a caller learns nothing of which passes exist).
 */
export function authorizedPass(
  config: Pick<Config, 'secretKey'>,
  pass: WalletPass | undefined,
  authorization: string | undefined,
): WalletPass {
  const token = applePassToken(authorization);
  const secretKey = defined(config.secretKey, 'the secret key (authentication tokens of passes)');
  // Compared even for an unknown pass (against a made-up id), so both take the same time.
  const matches = authenticationTokenMatches(secretKey, pass?.id ?? 'no-such-pass', token ?? '');
  if (!pass || !token || !matches) throw unauthorized();
  return pass;
}
