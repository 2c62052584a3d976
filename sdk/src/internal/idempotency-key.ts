/**
 * Idempotency keys: every POST, PUT and PATCH carries an `Idempotency-Key` (the caller's own, or
 * a random UUID) that all its retries reuse, so a retry after a lost response never runs the
 * action twice. `POST /oauth/token` is left alone (issuing a token is not an action to replay).
 */
const keyedMethods = new Set(['POST', 'PUT', 'PATCH']);

export function ensureIdempotencyKey(request: Request): void {
  if (!keyedMethods.has(request.method) || request.headers.has('idempotency-key')) return;
  const q = request.url.indexOf('?');
  if ((q === -1 ? request.url : request.url.slice(0, q)).endsWith('/oauth/token')) return;
  request.headers.set('idempotency-key', crypto.randomUUID());
}
