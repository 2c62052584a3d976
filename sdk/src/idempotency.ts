/**
 * Idempotent requests: every POST, PUT and PATCH the client sends carries an `Idempotency-Key`
 * (internal/idempotency-key.ts); `wasReplayed` tells whether the server answered with the stored
 * result of an earlier request with the same key.
 */

/**
 * True when the server answered with the stored result of an earlier request with the same key
 * (`Idempotent-Replayed: true`): the action did not run again.
 */
export function wasReplayed(result: Response | { response: Response }): boolean {
  const response = result instanceof Response ? result : result.response;
  return response.headers.get('idempotent-replayed') === 'true';
}
