import type { Request } from '@hapi/hapi';

/**
 * The route template of a request (`/members/{uuid}`), never its URL (which may carry ids and
 * e-mail addresses); `unmatched` for a request that matched no route (hapi's own not-found and
 * bad-request routes are `_special`). The label of metrics and access lines alike.
 */
export const routeTemplateOf = (request: Request): string =>
  !request.route?.path || (request.route.method as string) === '_special' ? 'unmatched' : request.route.path;
