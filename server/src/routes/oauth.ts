import { appOf } from '../context.js';
import { issueToken, oauthValidationError } from '../services/tokens.js';
import type { RouteDef } from './types.js';

export const oauthRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/oauth/token',
    options: {
      payload: { allow: ['application/json', 'application/x-www-form-urlencoded'] },
      onValidationError: oauthValidationError,
    },
    handler: async (request, h) => {
      const body = await issueToken(appOf(request).sql, (request.payload ?? {}) as Record<string, string>);
      // RFC 6749 §5.1: token responses are never cached.
      return h.response(body).header('cache-control', 'no-store').header('pragma', 'no-cache');
    },
  },
];
