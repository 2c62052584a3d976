import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { wakeOverdueLanes } from '../services/deliveries.js';
import { moveClock, readClock } from '../services/sandbox-clock.js';
import { resetSandbox } from '../services/sandbox-reset.js';
import { ok, payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

/** Paths that exist only in sandbox mode (server.ts leaves them out when config.sandbox is off: 404 like any unknown path). */
export const SANDBOX_PATH_PREFIX = '/sandbox/';

/** Far enough back that every pending delivery counts as overdue: every lane with work is woken. */
const ANY_PENDING = -100 * 365 * 86_400;

/**
 * The sandbox controls (issue 16): the clock and a reset. A clock change wakes the delivery lanes
 * of every subscription with pending deliveries: retries that became due are sent at once, and a
 * lane sleeping until a retry that is now nearer goes to sleep again with the new time.
 */
export const sandboxRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/sandbox/clock',
    handler: async (request) => {
      const { resets: _resets, ...state } = await readClock(appOf(request).sql);
      return ok(state) satisfies Schemas['SandboxClockResponse'];
    },
  },
  {
    method: 'POST',
    path: '/sandbox/clock',
    handler: async (request) => {
      const app = appOf(request);
      const state = await moveClock(app.sql, payloadOf<Schemas['MoveSandboxClockRequest']>(request));
      await app.sandboxClock?.refresh();
      await wakeOverdueLanes(app.sql, app.config.webhookConcurrencyPerSubscription, ANY_PENDING);
      return ok(state) satisfies Schemas['SandboxClockResponse'];
    },
  },
  {
    method: 'POST',
    path: '/sandbox/reset',
    handler: async (request) => {
      const app = appOf(request);
      const tookMs = await resetSandbox(app.sql, app.config.fixtures);
      await app.sandboxClock?.refresh();
      const { resets: _resets, ...clock } = await readClock(app.sql);
      return ok({ took_ms: tookMs, clock }) satisfies Schemas['SandboxResetResponse'];
    },
  },
];
