import type { Lifecycle, Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import { fillQueryFromBody, isObjectBody, statusOf } from '../lib/http.js';
import { checkWebhookUrl, WebhookUrlError } from '../lib/ssrf.js';
import { principalOf } from '../plugins/auth.js';
import { invalidField } from '../services/platform/errors.js';
import type { OrganizationScope } from '../services/platform/organization-scope.js';

/**
 * What the route files share: reading a request's input and scope, the success envelope, and
 * the route options of the DELETE endpoints that take their parameters from a body or a query.
 * The HTTP helpers the plugins use too are in lib/http.ts (JSON_TYPE and statusOf are re-exported).
 */

export { JSON_TYPE, statusOf } from '../lib/http.js';

/** The organizations the request's token may reach. */
export const scopeOf = (request: Request): OrganizationScope => principalOf(request);
/** The validated body (openapi.yaml's schema of the operation); `{}` when there is none. */
export const payloadOf = <T>(request: Request) => (request.payload ?? {}) as T;
/** The validated query parameters. */
export const queryOf = <T>(request: Request) => request.query as T;

export const SUCCESSFUL = 'Request successful';
/** The envelope of most list and bulk responses: `{ message: 'Request successful', data }`. */
export const ok = <T>(data: T) => ({ message: SUCCESSFUL, data });

/**
 * For operations whose parameters openapi.yaml puts in the query while the spec's samples send a
 * JSON body (DELETE /members/{uuid}): before validation, body values fill in whatever the query
 * string does not give.
 */
export const queryFromBody = {
  payload: {
    allow: ['application/json'],
    // The body is optional here (openapi.yaml describes none): one that is not JSON is ignored, not a 415.
    failAction: ((_request, h, error) => {
      if (statusOf(error) === 415) return h.continue;
      throw error;
    }) satisfies Lifecycle.FailAction,
  },
  ext: {
    onPostAuth: {
      method: ((request: Request, h) => {
        if (isObjectBody(request.payload)) fillQueryFromBody(request.query as Record<string, unknown>, request.payload);
        return h.continue;
      }) satisfies Lifecycle.Method,
    },
  },
};

/**
 * For operations whose parameters openapi.yaml puts in a JSON body while clients may send the
 * query string (the tag DELETEs): before validation, query values fill in whatever the body does
 * not give.
 */
export const bodyFromQuery = {
  ext: {
    onPostAuth: {
      method: ((request: Request, h) => {
        const target = request as { payload: unknown };
        const body = request.payload;
        if (body === null || body === undefined) target.payload = { ...request.query };
        else if (isObjectBody(body)) target.payload = { ...request.query, ...body };
        return h.continue;
      }) satisfies Lifecycle.Method,
    },
  },
};

/**
 * A webhook URL checked against the rules of openapi.yaml (scheme, host, port; its addresses, so
 * DNS may be asked: before any transaction opens). A broken rule is a 422 naming `url`.
 */
export async function checkSubscriptionUrl(request: Request, url: string): Promise<void> {
  try {
    await checkWebhookUrl(url, { allowInsecure: appOf(request).config.webhookAllowInsecure });
  } catch (error) {
    if (error instanceof WebhookUrlError) throw invalidField('url', error.message);
    throw error;
  }
}
