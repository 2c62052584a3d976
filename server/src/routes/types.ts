import type { Lifecycle, RouteOptions } from '@hapi/hapi';

/**
 * A route as resources declare it: method, path and handler. Its ability (auth scope) and its
 * request validation are not written here: server.ts takes both from the operation of the same
 * method and path in openapi.yaml.
 */
export type RouteDef = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  handler: Lifecycle.Method;
  options?: Omit<RouteOptions, 'handler' | 'validate' | 'auth'> & {
    /** The webshop order endpoint answers 401, not 403, to a token without the ability (spec). */
    insufficientScopeStatus?: 401;
  };
};
