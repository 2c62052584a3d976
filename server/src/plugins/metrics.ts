import type { Plugin, Request, ResponseObject } from '@hapi/hapi';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { isLoopbackHost } from '../lib/loopback-host.js';
import { routeTemplateOf } from '../lib/route-template.js';
import { createDatabaseMetrics, type DatabaseMetrics } from '../services/platform/metrics.js';

const PREFIX = 'loyalty_';

export type MetricsState = {
  /** This server's registry: not prom-client's global one, tests run many servers in one process. */
  registry: Registry;
  database: DatabaseMetrics;
};

declare module '@hapi/hapi' {
  interface PluginProperties {
    'loyalty-metrics': MetricsState;
  }
  interface PluginsStates {
    metrics?: { longPoll?: boolean };
  }
}

/**
 * Prometheus metrics of this process (issue 14, item 5): request durations by route template and
 * status, rate-limit rejections, idempotency replays and conflicts, open event-feed long polls and
 * Node's process metrics, all counted from the responses (the other plugins are not touched).
 * The database gauges (worker queue, voucher jobs, passes, deliveries, connections) are computed by
 * services/platform/metrics.ts at scrape time, at most once per LOYALTY_METRICS_CACHE_SECONDS. GET /metrics (metricsRoutes) serves them.
 */
export const metricsPlugin: Plugin<Record<string, never>> = {
  name: 'loyalty-metrics',
  register(server) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: PREFIX });
    const duration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Duration of HTTP requests by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    const rateLimited = new Counter({
      name: `${PREFIX}rate_limit_rejections_total`,
      help: 'Requests answered 429 by the rate limit, by policy (token or ip) and route template.',
      labelNames: ['scope', 'route'],
      registers: [registry],
    });
    const replays = new Counter({
      name: `${PREFIX}idempotency_replays_total`,
      help: 'Requests answered with a stored response (Idempotent-Replayed: true), by route template.',
      labelNames: ['route'],
      registers: [registry],
    });
    const conflicts = new Counter({
      name: `${PREFIX}idempotency_conflicts_total`,
      help: 'Idempotency-Key conflicts by reason: in_progress (409) or reuse with a different request (422).',
      labelNames: ['reason', 'route'],
      registers: [registry],
    });
    const longPolls = new Gauge({
      name: `${PREFIX}event_feed_long_polls_open`,
      help: 'GET /events requests with wait > 0 held open now.',
      registers: [registry],
    });
    const database = createDatabaseMetrics(registry, PREFIX);
    // By key: expose(object) merges a deep copy, which would detach the metrics from their registry.
    server.expose('registry', registry);
    server.expose('database', database);

    server.ext('onPreHandler', (request, h) => {
      if (request.route.path === '/events' && Number((request.query as { wait?: unknown }).wait) > 0) {
        const state = request.plugins.metrics ?? {};
        request.plugins.metrics = state;
        state.longPoll = true;
        longPolls.inc();
        // hapi's 'response' event may not come for a connection closed under the handler.
        request.raw.res.once('close', () => endLongPoll(request));
      }
      return h.continue;
    });
    const endLongPoll = (request: Request) => {
      const state = request.plugins.metrics;
      if (!state?.longPoll) return;
      state.longPoll = false;
      longPolls.dec();
    };

    server.events.on('response', (request) => {
      endLongPoll(request);
      const response = request.response as
        | (ResponseObject & { isBoom?: false })
        | { isBoom: true; output: { statusCode: number } }
        | null;
      const status = response ? (response.isBoom ? response.output.statusCode : response.statusCode) : 0;
      const route = routeTemplateOf(request);
      const seconds = ((request.info.completed || Date.now()) - request.info.received) / 1000;
      duration.observe({ method: request.method.toUpperCase(), route, status: String(status) }, Math.max(0, seconds));
      if (status === 429) rateLimited.inc({ scope: request.plugins.rateLimit?.state?.policy ?? 'unknown', route });
      if (!response || response.isBoom) return;
      if (String(response.headers['idempotent-replayed'] ?? '') === 'true') replays.inc({ route });
      const code = (response.source as { error?: unknown } | null)?.error;
      if (status === 409 && code === 'idempotency_in_progress') conflicts.inc({ reason: 'in_progress', route });
      if (status === 422 && code === 'idempotency_key_reuse') conflicts.inc({ reason: 'reuse', route });
    });
  },
};

/**
 * Who may read GET /metrics, which shows server-wide business volume (issue 25): `token`, holders
 * of LOYALTY_METRICS_TOKEN when it is set (on any address); `open`, anyone who reaches a server
 * bound to loopback without one (only this machine does); `off`, nobody, on any other HOST without
 * one. HOST stays only the bind address: the server starts either way (`HOST=0.0.0.0 npm start`).
 */
export type MetricsAccess = 'token' | 'open' | 'off';

export function metricsAccess({ host, metricsToken }: Pick<Config, 'host' | 'metricsToken'>): MetricsAccess {
  if (metricsToken) return 'token';
  return isLoopbackHost(host) ? 'open' : 'off';
}

/** The one line start.ts (or the cluster's primary) prints when /metrics is `off`. */
export function metricsStartWarning(config: Pick<Config, 'host' | 'metricsToken'>): string | undefined {
  if (metricsAccess(config) !== 'off') return undefined;
  return `loyalty: warning: GET /metrics is off (401 to every request) until LOYALTY_METRICS_TOKEN is set: HOST ${config.host} is not a loopback address`;
}
