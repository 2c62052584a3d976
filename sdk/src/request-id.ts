/**
 * Request ids (`X-Request-Id`). Every HTTP request the client sends carries one: the caller's own
 * `X-Request-Id` header when the call sets one (sent unchanged on every attempt), otherwise
 * `<uuid>-<n>`, one random UUID per call and `n` counting the requests of the call from 1 (each
 * retry, and the resend after a token renewal, is a request of its own). The server answers with
 * the id it used in its `X-Request-Id` header (the one sent when it is at most 128 characters of
 * `A-Z a-z 0-9 . _ : + = -`, else one of its own) and logs it with the request; `5XX` bodies also
 * carry it as `request_id`.
 */
import { REQUEST_ID_HEADER, sentRequestIdOf } from './internal/request-ids.js';

/**
 * The request id of a result or response: the `X-Request-Id` the server answered with, else the
 * id the SDK sent the request with; undefined for a response that did not come through the client.
 *
 *     const result = await client.GET('/tags');
 *     console.log(requestIdOf(result)); // "8c0f…-1"
 */
export function requestIdOf(result: Response | { response: Response }): string | undefined {
  const response = result instanceof Response ? result : result.response;
  return response.headers.get(REQUEST_ID_HEADER) ?? sentRequestIdOf(response);
}
