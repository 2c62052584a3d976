import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import type { Principal } from '../services/platform/tokens.js';

declare module '@hapi/hapi' {
  interface UserCredentials extends Principal {}
}

/**
 * `Authorization: Bearer <token>` → the token's organizations and device (`credentials.user`), its
 * abilities (as hapi scope). `resolve` may answer from a cache; `admit` then has the last word on
 * every request (the rate limiter's count, which checks that the token is still live): false is a
 * 401 like an unknown token.
 */
export const authPlugin: Plugin<{
  resolve: (token: string) => Promise<Principal | null>;
  admit: (request: Request, principal: Principal) => Promise<boolean>;
}> = {
  name: 'loyalty-auth',
  register(server, { resolve, admit }) {
    server.auth.scheme('bearer', () => ({
      async authenticate(request: Request, h: ResponseToolkit) {
        const header: string = String(request.headers.authorization ?? '');
        // The token: one or more non-space characters, so never empty when the header matches.
        const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
        if (!token) throw Boom.unauthorized(null, 'Bearer');
        const principal = await resolve(token);
        if (!principal || !(await admit(request, principal))) throw Boom.unauthorized('Unauthenticated.', 'Bearer');
        return h.authenticated({ credentials: { scope: principal.abilities, user: principal } });
      },
    }));
    server.auth.strategy('token', 'bearer');
    server.auth.default('token');
  },
};

/** The token behind an authenticated request (hapi's `credentials.user`, typed by `UserCredentials` above). */
export function principalOf(request: Request): Principal {
  const principal = request.auth.credentials?.user;
  if (!principal) throw new Error(`${request.method.toUpperCase()} ${request.path}: no token on a route without auth`);
  return principal;
}
