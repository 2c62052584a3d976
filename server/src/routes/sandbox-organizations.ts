import type { Request } from '@hapi/hapi';
import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { writeWaitingRequestLogs } from '../plugins/request-log-store.js';
import { isOperator } from '../services/sandbox/sandbox-operator.js';
import {
  createSandboxOrganization,
  deleteSandboxOrganization,
  type SandboxCaller,
} from '../services/sandbox/sandbox-organizations.js';
import { ok, payloadOf } from './route-options.js';
import type { RouteDef } from './types.js';

const callerOf = (request: Request): SandboxCaller => {
  const p = principalOf(request);
  return { clientId: p.clientId, abilities: p.abilities, organizationIds: p.organizationIds, operator: isOperator(p) };
};

/** Throwaway sandbox organizations for parallel test runs (issue 25; services/sandbox/sandbox-organizations.ts). */
export const sandboxOrganizationRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/sandbox/organizations',
    handler: async (request, h) => {
      const input = payloadOf<Schemas['CreateSandboxOrganizationRequest']>(request);
      const data = await createSandboxOrganization(appOf(request).sql, callerOf(request), input);
      return h.response(ok(data) satisfies Schemas['SandboxOrganizationCreatedResponse']).code(201);
    },
  },
  {
    method: 'DELETE',
    path: '/sandbox/organizations/{id}',
    handler: async (request, h) => {
      await writeWaitingRequestLogs(request); // so that the deletion removes them too
      await deleteSandboxOrganization(appOf(request).sql, callerOf(request), request.params.id as string);
      await appOf(request).sandboxClock?.refresh();
      return h.response().code(204);
    },
  },
];
