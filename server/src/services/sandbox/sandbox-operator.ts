import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../../lib/hash.js';
import { OPERATOR_ABILITY } from '../platform/fixtures.js';
import type { Principal } from '../platform/tokens.js';

/** The client id the operator's requests count under (rate limits, idempotency); no client can be made with it. */
export const OPERATOR_CLIENT_ID = '(sandbox operator)';

/**
 * The sandbox operator (issue 25): whoever runs the server, holding LOYALTY_SANDBOX_OPERATOR_TOKEN
 * (config.ts) and sending it as a bearer token. Its principal reaches no organization and holds
 * one ability, `sandbox.operator`, which only the operations that list the `sandboxOperator`
 * scheme in openapi.yaml accept (the whole-server reset, throwaway organizations). Compared in
 * constant time (both sides hashed to the same length first); the value is never logged.
 */
export function withOperator(
  resolve: (token: string) => Promise<Principal | null>,
  operatorToken: string | undefined,
): (token: string) => Promise<Principal | null> {
  if (!operatorToken) return resolve;
  const expected = sha256(operatorToken);
  return async (token) => {
    const given = sha256(token);
    if (!timingSafeEqual(given, expected)) return resolve(token);
    return {
      clientId: OPERATOR_CLIENT_ID,
      tokenHash: given.toString('base64'),
      organizationIds: [],
      deviceId: null,
      abilities: [OPERATOR_ABILITY],
      expiresAt: Number.POSITIVE_INFINITY,
      revocable: false,
    };
  };
}

export const isOperator = (principal: Principal): boolean => principal.abilities.includes(OPERATOR_ABILITY);
