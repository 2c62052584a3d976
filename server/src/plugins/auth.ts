import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import type { Principal } from '../services/platform/tokens.js';

declare module '@hapi/hapi' {
  interface UserCredentials extends Principal {}
}

/** `Authorization: Bearer <token>` → the token's organizations, abilities (as hapi scope) and device. */
export const authPlugin: Plugin<{ resolve: (token: string) => Promise<Principal | null> }> = {
  name: 'loyalty-auth',
  register(server, { resolve }) {
    server.auth.scheme('bearer', () => ({
      async authenticate(request: Request, h: ResponseToolkit) {
        const header: string = String(request.headers.authorization ?? '');
        // The token: one or more non-space characters, so never empty when the header matches.
        const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
        if (!token) throw Boom.unauthorized(null, 'Bearer');
        const principal = await resolve(token);
        if (!principal) throw Boom.unauthorized('Unauthenticated.', 'Bearer');
        return h.authenticated({ credentials: { ...principal, scope: principal.abilities, user: principal } });
      },
    }));
    server.auth.strategy('token', 'bearer');
    server.auth.default('token');
  },
};

export const principalOf = (request: Request): Principal => request.auth.credentials as unknown as Principal;
