/** The ids the SDK sends its requests with (request-id.ts tells how), and the id each response's request had. */

export const REQUEST_ID_HEADER = 'x-request-id';

/** The id each response's request was sent with (for responses without the header, e.g. a proxy's). */
const sentIds = new WeakMap<Response, string>();

/** Remembers the id the request of `response` was sent with. */
export function noteSentRequestId(response: Response, id: string): void {
  sentIds.set(response, id);
}

/** The caller's `X-Request-Id` in `headers`, if any. */
export const callerRequestId = (headers: Headers): string | undefined => headers.get(REQUEST_ID_HEADER) ?? undefined;

/**
 * Makes the ids of one call's requests: `next()` is the caller's id every time when it set one,
 * otherwise `<uuid>-1`, `<uuid>-2`, …
 */
export function requestIdSequence(callerId: string | undefined): () => string {
  if (callerId !== undefined) return () => callerId;
  const base = crypto.randomUUID();
  let n = 0;
  return () => `${base}-${++n}`;
}

/** The id a response's request was sent with, if it came through the client. */
export const sentRequestIdOf = (response: Response): string | undefined => sentIds.get(response);
