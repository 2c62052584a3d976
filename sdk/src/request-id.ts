/**
 * Request ids (`X-Request-Id`). Every HTTP request the client sends carries one: the caller's own
 * `X-Request-Id` header when the call sets one (sent unchanged on every attempt), otherwise
 * `<uuid>-<n>`, one random UUID per call and `n` counting the requests of the call from 1 (each
 * retry, and the resend after a token renewal, is a request of its own). The server answers with
 * the id it used in its `X-Request-Id` header (the one sent when it is at most 128 characters of
 * `A-Z a-z 0-9 . _ : + = -`, else one of its own) and logs it with the request; `5XX` bodies also
 * carry it as `request_id`.
 */
import type { HeaderBag } from './retry.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** The id each response's request was sent with (for responses without the header, e.g. a proxy's). */
const sentIds = new WeakMap<Response, string>();

/** Remembers the id the request of `response` was sent with. */
export function noteSentRequestId(response: Response, id: string): void {
  sentIds.set(response, id);
}

/** The caller's `X-Request-Id` in `headers`, if any. */
export function callerRequestId(headers: HeaderBag): string | undefined {
  const value = headers instanceof Headers ? headers.get(REQUEST_ID_HEADER) : headers[REQUEST_ID_HEADER];
  return value ?? undefined;
}

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

/**
 * The request id of a result or response: the `X-Request-Id` the server answered with, else the
 * id the SDK sent the request with; undefined for a response that did not come through the client.
 *
 *     const result = await client.GET('/tags');
 *     console.log(requestIdOf(result)); // "8c0f…-1"
 */
export function requestIdOf(result: Response | { response: Response }): string | undefined {
  const response = result instanceof Response ? result : result.response;
  return response.headers.get(REQUEST_ID_HEADER) ?? sentIds.get(response);
}

/** The id a response's request was sent with, if it came through the client. */
export const sentRequestIdOf = (response: Response): string | undefined => sentIds.get(response);
