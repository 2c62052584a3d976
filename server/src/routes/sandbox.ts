import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { wakeOverdueLanes } from '../services/webhooks/deliveries.js';
import { clockOrganization, moveClock, readClock } from '../services/sandbox/sandbox-clock.js';
import { noteExpiries } from '../services/wallet/wallet-registrations.js';
import { ok, payloadOf, queryOf, scopeOf } from './route-options.js';
import type { RouteDef } from './types.js';

/** Paths that exist only in sandbox mode (server.ts leaves them out when config.sandbox is off: 404 like any unknown path). */
export const SANDBOX_PATH_PREFIX = '/sandbox/';

/** Far enough back that every pending delivery counts as overdue: every lane with work is woken. */
const ANY_PENDING = -100 * 365 * 86_400;

/**
 * The sandbox controls (issues 16 and 25): the clock of one organization and a reset. The clock
 * is the token's organization's, or the one `organization_id` names when the token has several
 * (a 422 naming it otherwise). A clock change wakes the delivery lanes of that organization's
 * subscriptions with pending deliveries: retries that became due are sent at once, and a lane
 * sleeping until a retry that is now nearer goes to sleep again with the new time. Other
 * organizations' lanes are left alone.
 */
export const sandboxRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/sandbox/clock',
    handler: async (request) => {
      const { organization_id } = queryOf<{ organization_id?: string }>(request);
      const state = await readClock(appOf(request).sql, clockOrganization(scopeOf(request), organization_id));
      return ok(state) satisfies Schemas['SandboxClockResponse'];
    },
  },
  {
    method: 'POST',
    path: '/sandbox/clock',
    handler: async (request) => {
      const app = appOf(request);
      const { organization_id, ...move } = payloadOf<Schemas['MoveSandboxClockRequest']>(request);
      const organizationId = clockOrganization(scopeOf(request), organization_id);
      const state = await moveClock(app.sql, organizationId, move);
      await app.sandboxClock?.refresh();
      await wakeOverdueLanes(app.sql, app.config.webhookConcurrencyPerSubscription, ANY_PENDING, organizationId);
      // Registered wallet passes whose expiry the move crossed: their devices are pushed.
      await noteExpiries(app.sql, organizationId);
      return ok(state) satisfies Schemas['SandboxClockResponse'];
    },
  },
  // POST /sandbox/reset: routes/sandbox-reset.ts (issue 25, scoped to the caller's organizations).
];
