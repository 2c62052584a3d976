import type { Plugin, Request } from '@hapi/hapi';
import { Counter } from 'prom-client';
import type { Sql } from '../db/pool.js';
import {
  createRequestLogBuffer,
  type RequestLogBuffer,
  type RequestLogBufferOptions,
} from '../services/request-logs/request-log-buffer.js';
import { accessLineOf, organizationIdsOf } from './request-log.js';

declare module '@hapi/hapi' {
  interface PluginProperties {
    'loyalty-request-log-store': { buffer: RequestLogBuffer };
  }
}

/** Routes whose requests are not logged: reading the log itself (a follow would log its own polls forever). */
const UNLOGGED_ROUTES = new Set(['/request-logs']);

/** The code of an error body (`{"error": "validation_failed", …}`), if the response has one. */
export function errorCodeOf(request: Request): string | null {
  const response = request.response as
    | { isBoom?: boolean; source?: unknown; output?: { payload?: { error?: unknown } } }
    | null
    | undefined;
  if (!response) return null;
  const body = response.isBoom ? response.output?.payload : response.source;
  const code = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  // The document's codes are snake_case words; anything else (hapi's "Not Found") is no code.
  return typeof code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(code) ? code : null;
}

/**
 * Writes this process's waiting request log rows now. Called before an organization's data is
 * removed (a sandbox reset, a throwaway organization's deletion), so that the removal takes the
 * rows of the requests made just before it too; they wait in memory for at most a quarter second.
 */
export async function writeWaitingRequestLogs(request: Request): Promise<void> {
  await request.server.plugins['loyalty-request-log-store']?.buffer.flush();
}

/**
 * The request log integrators read (GET /request-logs, issue 29): for every request made with a
 * token of an organization, a row per organization of the token from accessLineOf (the access
 * log's one door: method, route template, status, duration, request id, client) and the error
 * body's code. Nothing of the URL, its query, the headers or the body. The row goes into an
 * in-process buffer written in batches (services/request-logs/request-log-buffer.ts); the server's
 * stop writes what is left. `loyalty_request_log_dropped_total` counts rows dropped while the
 * database could not take them.
 */
export const requestLogStorePlugin: Plugin<
  { sql: Sql; log: (line: string) => void } & Pick<RequestLogBufferOptions, 'intervalMs' | 'batchRows' | 'maxRows'>
> = {
  name: 'loyalty-request-log-store',
  dependencies: ['loyalty-metrics'],
  register(server, { sql, log, ...sizes }) {
    const dropped = new Counter({
      name: 'loyalty_request_log_dropped_total',
      help: 'Request log rows dropped because the database could not take them in time (the buffer was full).',
      registers: [server.plugins['loyalty-metrics'].registry],
    });
    const buffer = createRequestLogBuffer(sql, {
      ...sizes,
      onDrop: (rows) => dropped.inc(rows),
      // Once per outage (the buffer says when): the database's loss is reported by the errors plugin too.
      onError: (error) =>
        log(`loyalty: request log: rows kept in memory, not written yet: ${(error as Error).message}`),
    });
    server.expose('buffer', buffer);
    server.events.on('response', (request) => {
      const organizations = organizationIdsOf(request);
      if (!organizations.length || UNLOGGED_ROUTES.has(request.route.path)) return;
      const line = accessLineOf(request);
      const created_at = new Date(request.info.received).toISOString();
      const error_code = line.status >= 400 ? errorCodeOf(request) : null;
      for (const organization_id of organizations)
        buffer.add({
          organization_id,
          created_at,
          method: line.method,
          route: line.route,
          status: line.status,
          duration_ms: line.duration_ms,
          request_id: line.request_id,
          client_id: line.client_id ?? null,
          error_code,
        });
    });
    server.ext('onPostStop', async () => {
      await buffer
        .close()
        .catch((error: unknown) => log(`loyalty: request log: last rows lost: ${(error as Error).message}`));
    });
  },
};
