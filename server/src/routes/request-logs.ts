import { appOf } from '../context.js';
import { principalOf } from '../plugins/auth.js';
import { listRequestLogs } from '../services/request-logs/request-log-feed.js';
import { requireOrganization } from '../services/webhooks/webhook-subscriptions.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import { longestWaitSeconds } from './events.js';
import { queryOf, SUCCESSFUL } from './route-options.js';
import type { RouteDef } from './types.js';

export const requestLogRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/request-logs',
    handler: async (request) => {
      const q = queryOf<QueryOf<'/request-logs', 'get'>>(request);
      const principal = principalOf(request);
      const organizationId = requireOrganization(principal, q.organization_id);
      // A long poll ends early when the client goes away.
      const gone = new AbortController();
      request.raw.req.once('close', () => gone.abort());
      const page = await listRequestLogs(
        appOf(request).sql,
        organizationId,
        {
          status: q.status,
          method: q.method,
          path: q.path,
          request_id: q.request_id,
          since: q.since,
          cursor: q.cursor,
          after: q.after,
          limit: q.limit,
          waitSeconds:
            q.wait === undefined
              ? undefined
              : Math.min(q.wait, longestWaitSeconds(appOf(request).config.requestTimeoutMs)),
        },
        // Open polls are capped per client (all its tokens), as GET /events.
        { signal: gone.signal, pollKey: principal.clientId },
      );
      return { message: SUCCESSFUL, ...page } satisfies Schemas['RequestLogListResponse'];
    },
  },
];
