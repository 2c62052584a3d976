import type { Plugin, Request } from '@hapi/hapi';
import hapiPino from 'hapi-pino';
import type { Logger } from '../lib/logger.js';
import type { Principal } from '../services/tokens.js';
import { routeTemplateOf } from '../lib/route-template.js';
import { requestIdOf } from './request-id.js';

/** The fields of an access line: nothing of the headers, the query string or the body. */
export type AccessLine = {
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  request_id: string;
  client_id?: string;
  organization_id?: string;
};

/** What an access line says of a finished request (the route's template, never the URL itself). */
export function accessLineOf(request: Request): AccessLine {
  const { info } = request;
  const end = info.completed || info.responded || Date.now();
  const principal = request.auth?.isAuthenticated ? (request.auth.credentials as unknown as Principal) : undefined;
  const orgs = principal?.organizationIds ?? [];
  return {
    method: request.method.toUpperCase(),
    route: routeTemplateOf(request),
    status: request.raw.res.headersSent
      ? request.raw.res.statusCode
      : ((request.response as { statusCode?: number } | null)?.statusCode ?? 0),
    duration_ms: Math.max(0, end - info.received),
    request_id: requestIdOf(request),
    ...(principal && { client_id: principal.clientId }),
    ...(orgs.length > 0 && { organization_id: orgs.join(',') }),
  };
}

/**
 * One access line a request (hapi-pino, `msg: "request completed"`): method, route template,
 * status, duration_ms, request_id, and client_id and organization_id once authenticated.
 * hapi-pino's own `req`/`res`/`responseTime` objects (headers, URL with its query) are left out:
 * the request's child logger is made at its end from accessLineOf, and its serializers drop them.
 */
export const requestLogPlugin: Plugin<{ logger: Logger }> = {
  name: 'loyalty-request-log',
  async register(server, { logger }) {
    // Before hapi-pino's listener of the same event (podium calls them in order): its line is
    // written with the request's logger, which now carries the access fields.
    server.events.on('response', (request) => {
      request.logger = logger.child(accessLineOf(request));
    });
    await server.register({
      plugin: hapiPino,
      options: {
        instance: logger,
        logPayload: false,
        logQueryParams: false,
        logPathParams: false,
        logRouteTags: false,
        log4xxResponseErrors: false,
        logRequestStart: false,
        logRequestComplete: true,
        // Errors are logged by the errors plugin (stderr, with the request id); a request's error
        // object (a database error's detail may quote a row) is not written here.
        logEvents: ['onPostStart', 'onPostStop', 'response'],
        getChildBindings: () => ({}),
        wrapSerializers: false,
        serializers: { req: () => undefined, res: () => undefined, responseTime: () => undefined },
        customRequestCompleteMessage: () => 'request completed',
      },
    });
  },
};
