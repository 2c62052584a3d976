import { appOf } from '../context.js';
import { issueToken, oauthValidationError } from '../services/platform/tokens.js';
import type { Schemas } from '../lib/schemas.js';
import { statusOf } from './route-options.js';
import type { RouteDef } from './types.js';

export const oauthRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/oauth/token',
    options: {
      payload: {
        // RFC 6749 §5.2: a body that cannot be read is an invalid_request, in the OAuth error shape
        // the document gives this endpoint (found by the fuzz: a form body sent as JSON).
        failAction: (_request, _h, error) => {
          if (statusOf(error) === 400) {
            throw oauthValidationError({ body: ['The request body could not be read as its Content-Type says.'] });
          }
          throw error;
        },
      },
      onValidationError: oauthValidationError,
    },
    handler: async (request, h) => {
      const body = await issueToken(appOf(request).sql, (request.payload ?? {}) as Record<string, string>);
      // RFC 6749 §5.1: token responses are never cached.
      return h
        .response(body satisfies Schemas['TokenResponse'])
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache');
    },
  },
];
