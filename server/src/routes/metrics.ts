import { createHash, timingSafeEqual } from 'node:crypto';
import Boom from '@hapi/boom';
import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { metricsAccess } from '../plugins/metrics.js';
import type { RouteDef } from './types.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether the Authorization header carries `Bearer <token>`, compared in constant time. */
function bearerMatches(header: unknown, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(String(header ?? ''));
  // Digests: equal lengths for timingSafeEqual, and no early exit on the token's length.
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}

/** The 401 of an `off` /metrics: it tells the operator what to set, and nothing about the server. */
const OFF_MESSAGE =
  'GET /metrics is off: this server listens beyond loopback and LOYALTY_METRICS_TOKEN is not set. Set it (16+ characters) and send Authorization: Bearer <that token>.';

/**
 * GET /metrics: the Prometheus text format. No OAuth token (openapi.yaml `security: []`) and not
 * rate limited (server.ts exempts it). `metricsAccess` decides: with LOYALTY_METRICS_TOKEN set,
 * `Authorization: Bearer <that token>` is required and anything else answers the usual 401; off
 * loopback without it, every request answers 401 naming the variable. The database gauges are
 * cached for LOYALTY_METRICS_CACHE_SECONDS (10 s).
 */
export const metricsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/metrics',
    handler: async (request, h) => {
      const { config, sql } = appOf(request);
      const access = metricsAccess(config);
      if (access === 'off')
        return h
          .response({ message: OFF_MESSAGE, error: 'unauthenticated' } satisfies Schemas['Error'])
          .code(401)
          .header('www-authenticate', 'Bearer');
      if (config.metricsToken && !bearerMatches(request.headers.authorization, config.metricsToken))
        throw Boom.unauthorized(null, 'Bearer');
      const metrics = request.server.plugins['loyalty-metrics'];
      await metrics.database.refresh(sql, config.metricsCacheSeconds * 1000);
      return h.response(await metrics.registry.metrics()).type(metrics.registry.contentType);
    },
  },
];
