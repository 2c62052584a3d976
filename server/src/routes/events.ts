import { appOf } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { listEvents } from '../services/webhooks/event-feed.js';
import { eventTypesOf, type EventType } from '../services/webhooks/events.js';
import { requireOrganization } from '../services/webhooks/webhook-subscriptions.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import { queryOf, SUCCESSFUL } from './route-options.js';
import type { RouteDef } from './types.js';

/**
 * A long poll answers (empty) before hapi's request timeout would answer it with a 503: the
 * documented maximum `wait` (30 s) equals the default LOYALTY_REQUEST_TIMEOUT_MS, so the poll
 * ends a second short of the timeout. Found by the fuzz (test/fuzz), `wait=30`.
 */
export const longestWaitSeconds = (requestTimeoutMs: number) => Math.max(0, requestTimeoutMs - 1000) / 1000;

export const eventRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/events',
    handler: async (request) => {
      const q = queryOf<QueryOf<'/events', 'get'>>(request);
      const principal = principalOf(request);
      const organizationId = requireOrganization(principal, q.organization_id);
      // Validation admits only the document's event types; the guard gives them their type.
      const known = new Set<string>(eventTypesOf(appOf(request).openapi.document));
      // A long poll ends early when the client goes away.
      const gone = new AbortController();
      request.raw.req.once('close', () => gone.abort());
      const page = await listEvents(
        appOf(request).sql,
        organizationId,
        {
          after: q.after,
          types: q.types
            ? [...new Set(q.types.split(','))].filter((type): type is EventType => known.has(type))
            : undefined,
          limit: q.limit,
          waitSeconds:
            q.wait === undefined
              ? undefined
              : Math.min(q.wait, longestWaitSeconds(appOf(request).config.requestTimeoutMs)),
        },
        // Open polls are capped per client (all its tokens), so minting tokens gives no more.
        { signal: gone.signal, pollKey: principal.clientId },
      );
      return { message: SUCCESSFUL, ...page } satisfies Schemas['EventListResponse'];
    },
  },
];
