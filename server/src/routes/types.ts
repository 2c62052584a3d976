import type { Lifecycle, RouteOptions } from '@hapi/hapi';
import type { DomainError } from '../services/platform/errors.js';

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
    /**
     * Endpoints whose spec fixes its own error shape (OAuth, webshop orders) turn schema
     * validation failures into their own error here; the default is the generic 422.
     */
    onValidationError?: (fields: Record<string, string[]>) => DomainError;
  };
};
