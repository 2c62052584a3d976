import type { Plugin, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { Boom } from '@hapi/boom';
import { isDatabaseUnavailable } from '../db/outage.js';
import type { Sql } from '../db/pool.js';
import {
  createRequestCounter,
  purgeRateLimits,
  type RateLimitPolicy,
  type RateLimitState,
} from '../services/platform/rate-limits.js';
import { purgeWhileStarted } from '../lib/purge-while-started.js';
import type { Principal } from '../services/platform/tokens.js';

export type RateLimitOptions = {
  sql: Sql;
  /** Requests per window of one token (the "token" policy; api-spec: 600 a minute, counted per token). */
  tokenLimit: number;
  ipLimit: number;
  windowSeconds: number;
  /** Paths that are never counted and carry no rate-limit headers. */
  exempt?: string[];
  purgeIntervalMs?: number;
};

type RequestState = { exempt?: boolean; state?: RateLimitState };

declare module '@hapi/hapi' {
  interface PluginsStates {
    rateLimit?: RequestState;
  }
  interface PluginProperties {
    'loyalty-rate-limit': { admit: (request: Request, principal: Principal) => Promise<boolean> };
  }
}

const TOO_MANY = { message: 'Too Many Attempts.' };

/**
 * Per-token and per-IP request limits (openapi.yaml, info "Rate limits"). The "token" policy counts
 * each token on its own (keyed by its hash), as the specification says ("600 per minute, counted
 * per token"). What bounds a client is the cap of live tokens (services/platform/tokens.ts
 * LIVE_TOKENS_PER_CLIENT: issuing one more revokes the oldest), so minting tokens buys at most
 * 20 budgets (docs/decisions.md, issue 25). Requests without a token are
 * counted per IP when they arrive (onRequest); requests with a bearer token once the token is
 * known (onPostAuth), so an invalid token counts against the IP. Both checks come before
 * validation and handlers: a 429 means nothing ran. Responses that never reached onPostAuth
 * (bad token, unknown route, unreadable body) are counted in onPreResponse, so every request
 * counts exactly once and every response carries the headers.
 *
 * `admit` (exposed; the auth scheme calls it once it has the token's principal) counts a request
 * of a token in the same statement that checks the token's row is still live (rate-limits.ts,
 * `liveToken`): a token revoked or expired by any process is refused on its very next request
 * although the process caches resolved tokens, and that costs no statement more.
 */
export const rateLimitPlugin: Plugin<RateLimitOptions> = {
  name: 'loyalty-rate-limit',
  register(server, options) {
    const exempt = new Set(options.exempt ?? ['/health']);
    const stateOf = (request: Request): RequestState => (request.plugins.rateLimit ??= {});
    const countRequest = createRequestCounter(options.sql);

    const count = async (request: Request, policy: RateLimitPolicy) => {
      const tokenHash = policy === 'token' ? request.auth.credentials.user?.tokenHash : undefined;
      const state = await countRequest({
        policy,
        key: tokenHash ?? request.info.remoteAddress,
        limit: policy === 'token' ? options.tokenLimit : options.ipLimit,
        windowSeconds: options.windowSeconds,
      });
      if (!state) throw new Error('a bucket without liveToken is always counted');
      stateOf(request).state = state;
      return state;
    };
    // Called by the auth scheme before hapi sets the credentials on the request: the principal is given.
    server.expose('admit', async (request: Request, principal: Principal) => {
      if (stateOf(request).exempt) return true;
      const state = await countRequest({
        policy: 'token',
        key: principal.tokenHash,
        limit: options.tokenLimit,
        windowSeconds: options.windowSeconds,
        liveToken: principal.revocable ? Buffer.from(principal.tokenHash, 'base64') : undefined,
      });
      if (state) stateOf(request).state = state;
      return state !== null;
    });
    const policyOf = (request: Request): RateLimitPolicy =>
      request.auth.isAuthenticated && request.auth.credentials?.user?.tokenHash ? 'token' : 'ip';
    const tooMany = (h: ResponseToolkit, state: RateLimitState) =>
      h.response(TOO_MANY).code(429).header('retry-after', String(state.resetSeconds)).takeover();

    server.ext('onRequest', async (request, h) => {
      if (exempt.has(request.path.replace(/(.)\/+$/, '$1'))) {
        stateOf(request).exempt = true;
        return h.continue;
      }
      if (/^bearer\s/i.test(String(request.headers.authorization ?? ''))) return h.continue;
      const state = await count(request, 'ip');
      return state.exceeded ? tooMany(h, state) : h.continue;
    });

    // Before get-body: a GET over the limit is refused before its body is read.
    server.ext(
      'onPostAuth',
      async (request, h) => {
        const own = stateOf(request);
        if (own.exempt) return h.continue;
        // Counted already: by the address at onRequest (never over the limit then), or by `admit`.
        const state = own.state ?? (await count(request, policyOf(request)));
        return state.exceeded ? tooMany(h, state) : h.continue;
      },
      { before: ['loyalty-get-body'] },
    );

    // Before the errors plugin: it takes error responses over, and later onPreResponse
    // extensions do not run after a takeover.
    server.ext(
      'onPreResponse',
      async (request, h) => {
        const own = stateOf(request);
        if (own.exempt) return h.continue;
        let state = own.state;
        if (!state) {
          try {
            state = await count(request, policyOf(request));
          } catch (error) {
            // The database is down and this answer needed none (an unknown path, say): it goes out
            // as it is, without counting (a throw here would turn it into hapi's own 500).
            if (isDatabaseUnavailable(error)) return h.continue;
            throw error;
          }
          if (state.exceeded) return setHeaders(request, tooMany(h, state), state);
        }
        setHeaders(request, request.response as ResponseObject | Boom, state);
        return h.continue;
      },
      { before: ['loyalty-errors'] },
    );

    purgeWhileStarted(server, options.purgeIntervalMs ?? 10 * 60_000, () =>
      purgeRateLimits(options.sql, options.windowSeconds),
    );
  },
};

function setHeaders<T extends ResponseObject | Boom>(request: Request, response: T, state: RateLimitState): T {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'ratelimit-policy': `"${state.policy}";q=${state.limit};w=${state.windowSeconds}`,
    ratelimit: `"${state.policy}";r=${state.remaining};t=${state.resetSeconds}`,
  };
  if ('isBoom' in response && response.isBoom) {
    // The errors plugin rebuilds error responses (and drops a domain error's own headers), so
    // these go straight onto the outgoing message; hapi writes its own headers on top at send.
    for (const [name, value] of Object.entries(headers)) request.raw.res.setHeader(name, value);
  } else {
    for (const [name, value] of Object.entries(headers)) (response as ResponseObject).header(name, value);
  }
  return response;
}
