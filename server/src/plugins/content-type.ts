import type { Lifecycle, RouteOptions } from '@hapi/hapi';
import { deref, type OpenApiDocument, type Operation } from '../lib/openapi.js';
import { statusOf } from '../lib/http.js';

/**
 * One content-type rule for every route, read from openapi.yaml, applied by server.ts where the
 * routes are registered:
 *
 * - An operation with a requestBody reads exactly the media types its `content` lists
 *   (application/json; POST /oauth/token also forms). Any other Content-Type, or none, is a 415
 *   with the API's error body (plugins/errors.ts); the route's own options cannot widen it.
 * - An operation without a requestBody reads no input from a body: a JSON body is parsed (a few
 *   spec samples send parameters that way; the route decides whether it uses them) and any other
 *   or malformed body is ignored, never a 415 or 400 the document does not describe. A route
 *   that declares its own payload options for such a body keeps them.
 */
export function payloadOptionsFor(
  document: OpenApiDocument,
  op: Operation,
  routePayload: RouteOptions['payload'] | undefined,
): RouteOptions['payload'] {
  const types = requestMediaTypes(document, op);
  // hapi's default, made explicit: a body without a Content-Type is read as JSON (RFC 9110 lets
  // the recipient decide; the document's first type is JSON everywhere).
  if (types.length)
    return {
      ...routePayload,
      allow: types,
      defaultContentType: types[0],
      failAction: routePayload?.failAction ?? 'error',
    };
  return routePayload ?? { allow: ['application/json'], failAction: ignoreUnreadableBody };
}

/** The media types of an operation's requestBody, as the document lists them; none without a body. */
export function requestMediaTypes(document: OpenApiDocument, op: Operation): string[] {
  if (!op.raw.requestBody) return [];
  const body = deref<{ content?: Record<string, unknown> }>(document, op.raw.requestBody);
  return Object.keys(body.content ?? {});
}

const ignoreUnreadableBody: Lifecycle.FailAction = (_request, h, error) => {
  const status = statusOf(error);
  if (status === 415 || status === 400) return h.continue;
  throw error;
};
