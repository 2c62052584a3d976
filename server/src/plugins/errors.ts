import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import type { Boom } from '@hapi/boom';
import { createDatabaseOutage, isDatabaseUnavailable } from '../db/outage.js';
import { DomainError, type ErrorKind } from '../services/platform/errors.js';
import type { Schemas } from '../lib/schemas.js';
import { requestIdOf } from './request-id.js';

type ErrorCode = Schemas['ErrorCode'];
/** The codes of the generic error body and of the idempotency errors (openapi.yaml). */
type AnyErrorCode = ErrorCode | Schemas['IdempotencyError']['error'];
/** A body this plugin writes: the document's Error, with a code from its list. */
type ErrorBody = { message: string; error: ErrorCode; request_id?: string };

const statusOf: Record<ErrorKind, number> = {
  not_found: 404,
  validation: 422,
  conflict: 409,
  bad_request: 400,
  forbidden: 403,
  unauthenticated: 401,
  unprocessable: 422,
};

/** The code of an error hapi raised itself (routing, payload parsing, auth): ErrorCode of openapi.yaml. */
const codeOfStatus: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
};

/**
 * hapi's request timeout (a 503 of its own) or PostgreSQL's statement timeout (SQLSTATE 57014,
 * `query_canceled`, which config.requestTimeoutMs sets on the API pool): an expected state.
 */
const isTimeout = (error: Boom & { code?: unknown }) =>
  (error.output.statusCode === 503 && !error.data && /unavailable/i.test(error.message)) || error.code === '57014';

/** Seconds a client waits before retrying while the database is down: PostgreSQL restarts in a few seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * PostgreSQL stopped or unreachable: every request fails alike, so the outage is logged once (and
 * its end), not per request, and each request gets a documented 503 with Retry-After; the pools
 * reconnect by themselves when it is back. A plugin of its own so that its extension can run before
 * every other onPreResponse extension (hapi orders extensions by plugin).
 */
const databaseOutagePlugin: Plugin<{ notice?: (line: string) => void }> = {
  name: 'loyalty-database-outage',
  register(server, options) {
    const outage = createDatabaseOutage(options.notice ?? console.error);
    server.ext('onPreStop', () => outage.stop());
    // First: the other extensions (rate-limit headers, idempotency keys) would query the database
    // again, and an extension that throws ends the cycle with hapi's own 500.
    server.ext(
      'onPreResponse',
      (request: Request, h: ResponseToolkit) => {
        const response = request.response;
        if (!response || !('isBoom' in response) || !response.isBoom || !isDatabaseUnavailable(response))
          return h.continue;
        const { sql } = request.server.app;
        outage.report(response, () => sql`SELECT 1`);
        const message =
          'The database is unavailable at the moment; send the request again after Retry-After seconds (with the same Idempotency-Key, if any).';
        return h
          .response({ message, error: 'database_unavailable', request_id: requestIdOf(request) } satisfies ErrorBody)
          .code(503)
          .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
          .takeover();
      },
      { before: ['loyalty-rate-limit', 'loyalty-idempotency', 'loyalty-errors'] },
    );
  },
};

/** The one place where errors become HTTP responses: `{ message, error }`, plus `errors` on 422. */
export const errorsPlugin: Plugin<{ log?: (error: Error, request: Request) => void; notice?: (line: string) => void }> =
  {
    name: 'loyalty-errors',
    async register(server, options) {
      await server.register({ plugin: databaseOutagePlugin, options: { notice: options.notice } });
      server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
        const response = request.response;
        if (!response || !('isBoom' in response) || !response.isBoom) return h.continue;
        const error = response as Boom & Partial<DomainError>;
        if (error instanceof DomainError) {
          const status = statusOf[error.kind];
          const body = error.body ?? {
            message: error.message,
            error: error.code,
            ...(error.fields ? { errors: error.fields } : {}),
          };
          return h
            .response(body as object)
            .code(status)
            .takeover();
        }
        if (isTimeout(error)) {
          const message =
            'The request took too long and was stopped; send it again (with the same Idempotency-Key, if any).';
          return h
            .response({ message, error: 'request_timeout', request_id: requestIdOf(request) } satisfies ErrorBody)
            .code(503)
            .header('retry-after', '1')
            .takeover();
        }
        let status = error.output.statusCode;
        const routeSettings = request.route.settings.plugins as { loyalty?: { insufficientScopeStatus?: number } };
        if (status === 403 && routeSettings.loyalty?.insufficientScopeStatus)
          status = routeSettings.loyalty.insufficientScopeStatus;
        if (status >= 500) {
          options.log?.(error, request);
          // The request id (also in X-Request-Id) names the log line with the stack: what a bug report needs.
          return h
            .response({
              message: 'Internal server error.',
              error: 'internal_error',
              request_id: requestIdOf(request),
            } satisfies ErrorBody)
            .code(status)
            .takeover();
        }
        const payload = error.output.payload as { message?: string };
        let message = payload.message ?? error.message;
        if (status === 401) message = 'Unauthenticated.';
        if (status === 403 && /scope/i.test(message))
          message = 'This action is unauthorized: the token lacks the required ability.';
        if (status === 404 && message === 'Not Found') message = 'Not found.';
        if (status === 415) message = 'Unsupported media type: send Content-Type: application/json.';
        if (status === 400 && /invalid request payload json/i.test(message))
          message = 'The request body is not valid JSON.';
        const res = h
          .response({
            message,
            // A plugin's own code (the idempotency key's), else the status's; any other 4xx is a bad request.
            error: (error.data as { code?: AnyErrorCode } | null)?.code ?? codeOfStatus[status] ?? 'bad_request',
          })
          .code(status);
        for (const [name, value] of Object.entries(error.output.headers))
          if (value !== undefined) res.header(name, String(value));
        return res.takeover();
      });
    },
  };
