import type { RouteOptionsCors } from '@hapi/hapi';
import type { CorsConfig } from '../config-cors.js';
import type { Operation } from './openapi.js';

/**
 * CORS per route group (issue 29), the one place that decides it; server.ts applies it to every
 * route through hapi's route `cors` option, and hapi answers the preflights.
 *
 * - `api`: operations that take a token, and `POST /oauth/token` (a client secret). Exact origins
 *   only, never `*`: a client secret must not live in a browser, so only an operator's own origins
 *   (a back office behind its own login, a local tool) are let in.
 * - `public`: reads without any credential (health, this document, a pass's wallet links, the
 *   sandbox's Google key set). Exact origins, or `*`.
 * - none: pages a browser navigates to (no CORS needed), and routes with a credential of their
 *   own that no web page holds (`/metrics`, Apple's pass web service, the sandbox push sink).
 */
export type CorsGroup = 'api' | 'public' | 'none';

const PUBLIC_READS = new Set([
  'GET /health',
  'GET /health/ready',
  'GET /openapi.yaml',
  'GET /wallet/{code}/links',
  'GET /sandbox/google-wallet/jwks.json',
]);

export function corsGroupOf(op: Operation, needsToken: boolean): CorsGroup {
  if (needsToken || (op.method === 'POST' && op.path === '/oauth/token')) return 'api';
  return PUBLIC_READS.has(`${op.method} ${op.path}`) ? 'public' : 'none';
}

/** Request headers a page may send beyond hapi's defaults (Accept, Authorization, Content-Type, If-None-Match). */
const ALLOWED_HEADERS = ['Idempotency-Key', 'X-Request-Id', 'Prefer'];
/** Response headers a page may read: the ones the SDK reads (rate-limit pacing, retries, request ids, replays). */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'Idempotent-Replayed',
  'Preference-Applied',
  'Location',
];

/** hapi's route `cors` option for one operation: `false` (no CORS header at all) unless an origin is allowed. */
export function routeCors(config: CorsConfig, group: CorsGroup): RouteOptionsCors | false {
  if (group === 'none') return false;
  // hapi takes `*` only alone; it then allows any origin by naming the asking one.
  const origin = group === 'public' && config.anyOrigin ? ['*'] : config.origins;
  if (!origin.length) return false;
  return {
    origin,
    credentials: false,
    additionalHeaders: ALLOWED_HEADERS,
    additionalExposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  };
}
