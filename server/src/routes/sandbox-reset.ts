import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { writeWaitingRequestLogs } from '../plugins/request-log-store.js';
import { DomainError, invalidField, notFound } from '../services/platform/errors.js';
import { readClock } from '../services/sandbox/sandbox-clock.js';
import { isOperator } from '../services/sandbox/sandbox-operator.js';
import {
  allOrganizationIds,
  organizationExists,
  resetOrganizations,
  resetSandbox,
} from '../services/sandbox/sandbox-reset.js';
import { ok, payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

/**
 * POST /sandbox/reset (issue 25): the caller's organizations (a token with sandbox.manage: all of
 * its organizations, or the one `organization_id` names), or with the operator's credential the
 * whole server (`scope: server`) or one named organization.
 */
export const sandboxResetRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/sandbox/reset',
    handler: async (request) => {
      const app = appOf(request);
      const principal = principalOf(request);
      const operator = isOperator(principal);
      const { organization_id: named, scope = 'organizations' } = payloadOf<Schemas['SandboxResetRequest']>(request);
      let tookMs: number;
      let organizationIds: string[];
      await writeWaitingRequestLogs(request); // so that the reset removes them too
      if (scope === 'server') {
        if (!operator)
          throw new DomainError(
            'forbidden',
            'forbidden',
            'Only the sandbox operator (LOYALTY_SANDBOX_OPERATOR_TOKEN) may reset the whole server.',
          );
        if (named !== undefined)
          throw invalidField('organization_id', 'The organization_id field cannot be sent with scope server.');
        tookMs = await resetSandbox(app.sql, app.config.fixtures);
        organizationIds = await allOrganizationIds(app.sql);
      } else {
        if (operator) {
          if (named === undefined)
            throw invalidField(
              'organization_id',
              'The operator names the organization to reset (or sends scope server).',
            );
          if (!(await organizationExists(app.sql, named))) throw notFound('Organization');
          organizationIds = [named];
        } else if (named !== undefined) {
          if (!principal.organizationIds.includes(named)) throw notFound('Organization');
          organizationIds = [named];
        } else organizationIds = principal.organizationIds;
        if (!organizationIds.length) throw notFound('Organization');
        tookMs = await resetOrganizations(app.sql, app.config.fixtures, organizationIds);
      }
      await app.sandboxClock?.refresh();
      // One organization reset: its clock. Several, or the whole server: every one of their clocks is
      // back at real time, so the answer is the real time, offset 0, and names no organization.
      const [only, ...others] = organizationIds;
      const read = await readClock(app.sql, only ?? '');
      const { organization_id: _whose, ...realTime } = { ...read, now: read.real_now, offset_seconds: 0 };
      const clock = scope === 'organizations' && only !== undefined && !others.length ? read : realTime;
      return ok({
        took_ms: tookMs,
        scope,
        organization_ids: organizationIds,
        clock,
      }) satisfies Schemas['SandboxResetResponse'];
    },
  },
];
