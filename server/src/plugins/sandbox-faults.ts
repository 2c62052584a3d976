import type { Plugin, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { Sql } from '../db/pool.js';
import { sha256 } from '../lib/hash.js';
import { purgeWhileStarted } from '../lib/purge-while-started.js';
import {
  countFaultRequest,
  type FaultPreference,
  FaultPreferenceError,
  parseFaultPreference,
  purgeFaultCounters,
} from '../services/sandbox/sandbox-faults.js';
import type { Schemas } from '../lib/schemas.js';
import { requestIdOf } from './request-id.js';

declare module '@hapi/hapi' {
  interface PluginsStates {
    sandboxFault?: FaultPreference;
  }
}

/**
 * Faults on demand (sandbox mode only; server.ts registers this plugin only then):
 * `Prefer: fault=<kind>[;times=<n>][;retry_after=<s>][;status=<5xx>][;delay=<s>][;id=<any>]`.
 *
 * Only on authenticated API routes (a valid bearer token): `/health*`, `/metrics`, the pages,
 * `GET /openapi.yaml` and `POST /oauth/token` ignore the header, so nobody without a token can
 * write a counter (issue 25, finding 5).
 *
 * Counting, like `@loyalty/sdk/testing`'s `fail({ with, times, method, path })`: the first `times`
 * requests of one key fail, the ones after go through. The key is the bearer token (its hash),
 * the method, the path, and the fault preference with its parameters (so the SDK's retries,
 * which send the same headers, are counted: `times=2` fails two attempts and the third
 * succeeds). Another `id=` starts a fresh counter; a key unused for 10 minutes starts again; a
 * reset clears them all. The counters are in PostgreSQL (every API process sees them), at most
 * FAULT_KEYS_PER_CLIENT per client (the least recently used go first), expired ones purged.
 *
 * After the token and the rate limit (as in the mock), before validation and the handler:
 * - `rate_limit`: 429 with `Retry-After` (`retry_after`, default 1); the request does not run.
 * - `server_error`: `status` (default 503) with the `server_error` error; the request does not run.
 * - `timeout`: the answer is held for `delay` seconds (default 35: past the SDK's 30 s per
 *   attempt), or until the client goes; then 503. The request does not run.
 * - `network_reset`: the connection is destroyed without an answer; the request does not run.
 * - `in_progress`: the request RUNS (and its Idempotency-Key stores the answer), but a 2xx is
 *   answered 409 `idempotency_in_progress` with `Retry-After: 0`: its retry gets the replay. As
 *   in the mock, only a request with an Idempotency-Key is answered so (others answer normally).
 * Fault answers carry `Preference-Applied: fault=<kind>` (RFC 7240).
 */
export const sandboxFaultsPlugin: Plugin<{ sql: Sql; purgeIntervalMs?: number }> = {
  name: 'loyalty-sandbox-faults',
  register(server, { sql, purgeIntervalMs }) {
    const applied = (kind: string) => `fault=${kind}`;

    server.ext(
      'onPostAuth',
      async (request: Request, h: ResponseToolkit) => {
        const principal = request.auth.isAuthenticated ? request.auth.credentials?.user : undefined;
        if (!principal?.clientId || !principal.tokenHash) return h.continue;
        let fault: FaultPreference | undefined;
        try {
          fault = parseFaultPreference(request.headers.prefer as string | undefined);
        } catch (error) {
          if (!(error instanceof FaultPreferenceError)) throw error;
          return h
            .response({ message: error.message, error: 'bad_request', request_id: requestIdOf(request) })
            .code(400)
            .takeover();
        }
        if (!fault) return h.continue;
        const key = sha256(principal.tokenHash, request.method.toUpperCase(), request.path, fault.normalized).toString(
          'base64url',
        );
        if ((await countFaultRequest(sql, principal.clientId, key)) > fault.times) return h.continue;
        switch (fault.kind) {
          case 'rate_limit':
            return h
              .response({ message: 'Too Many Attempts.' })
              .code(429)
              .header('retry-after', String(fault.retryAfter))
              .header('preference-applied', applied(fault.kind))
              .takeover();
          case 'server_error':
            return serverError(request, h, fault.status, applied(fault.kind));
          case 'timeout':
            await heldFor(request, fault.delaySeconds * 1000);
            return serverError(request, h, 503, applied(fault.kind));
          case 'network_reset':
            // The connection goes; the answer is never written (hapi still has one, for the log and metrics).
            request.raw.req.socket?.destroy();
            return serverError(request, h, 503, applied(fault.kind));
          case 'in_progress':
            request.plugins.sandboxFault = fault;
            return h.continue;
        }
      },
      { after: ['loyalty-rate-limit'] },
    );

    // After the idempotency plugin has stored the answer; before the errors plugin's takeover.
    server.ext(
      'onPreResponse',
      (request: Request, h: ResponseToolkit) => {
        const fault = request.plugins.sandboxFault;
        const response = request.response as ResponseObject & { isBoom?: boolean };
        if (fault?.kind !== 'in_progress' || response.isBoom || response.statusCode >= 300) return h.continue;
        if (request.method === 'get' || !request.headers['idempotency-key']) return h.continue;
        return h
          .response({
            message: 'A request with this Idempotency-Key is still being processed.',
            error: 'idempotency_in_progress',
          })
          .code(409)
          .header('retry-after', '0')
          .header('preference-applied', applied(fault.kind))
          .takeover();
      },
      { after: ['loyalty-idempotency'], before: ['loyalty-errors'] },
    );

    purgeWhileStarted(server, purgeIntervalMs ?? 10 * 60_000, () => purgeFaultCounters(sql));
  },
};

const serverError = (request: Request, h: ResponseToolkit, status: number, applied: string) =>
  h
    .response({
      message: 'Server Error',
      // A code of the document's ErrorCode (issue 29), the one the SDK and its msw mock name a 5xx.
      error: 'server_error' satisfies Schemas['ErrorCode'],
      request_id: requestIdOf(request),
    })
    .code(status)
    .header('preference-applied', applied)
    .takeover();

/** Waits `ms`, or less when the client closes the connection first. */
function heldFor(request: Request, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      request.raw.res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    request.raw.res.once('close', done);
  });
}
