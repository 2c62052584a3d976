/**
 * What the HTTP layers share (plugins and routes): the JSON media type, the status of a hapi
 * (Boom) error, and the JSON object bodies that some operations read as query parameters.
 */

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The HTTP status of a hapi (Boom) error, when it has one. */
export const statusOf = (error: unknown): number | undefined =>
  (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;

/** A parsed JSON object body (not an array, a Buffer or a scalar). */
export const isObjectBody = (body: unknown): body is Record<string, unknown> =>
  Boolean(body) && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body);

/**
 * Fills in every query parameter the query string does not give from a JSON object body, so
 * validation sees one set of query parameters. Scalars become strings, as the query string would
 * carry them; null is left out; anything else is left as it is for validation to refuse.
 */
export function fillQueryFromBody(query: Record<string, unknown>, body: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(body)) {
    if (query[key] === undefined && value !== null) query[key] = typeof value === 'object' ? value : String(value);
  }
}
