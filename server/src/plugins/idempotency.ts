import type { Lifecycle, Plugin, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { Sql, Tx } from '../db/pool.js';
import {
  claimIdempotencyKey,
  extendIdempotencyClaim,
  parseIdempotencyKey,
  purgeExpiredIdempotencyKeys,
  releaseIdempotencyKey,
  requestHash,
  scopeHash,
  storeIdempotentResponse,
  type StoredResponse,
} from '../services/platform/idempotency.js';
import { JSON_TYPE } from '../lib/http.js';
import { purgeWhileStarted } from '../lib/purge-while-started.js';

export type IdempotencyOptions = {
  sql: Sql;
  /**
   * How long a claim outlives its last heartbeat before it counts as abandoned by a crash. While
   * the request runs, the claim is extended every `heartbeatMs` (default: a third of this), so
   * it cannot expire under a live request however long that runs.
   */
  lockSeconds?: number;
  heartbeatMs?: number;
  purgeIntervalMs?: number;
};

/** What a claimed request carries (lib/respond.ts calls `storeInTransaction`). */
export type IdempotencyState = {
  scope: Buffer;
  stored: boolean;
  /** Stops the heartbeat: the response is stored or the key released. */
  settle: () => void;
  /** The route's handler: whether it started, and how it ended (set by the wrapper every route gets). */
  handler: {
    started: boolean;
    done: boolean;
    awaited: boolean;
    ended: Promise<HandlerEnd>;
    end: (outcome: HandlerEnd) => void;
  };
  storeInTransaction: (tx: Tx, status: number, body: unknown) => Promise<void>;
};

declare module '@hapi/hapi' {
  interface PluginsStates {
    idempotency?: IdempotencyState;
  }
}

type HandlerEnd = { result: unknown } | { error: unknown };

const METHODS = new Set(['post', 'put', 'patch']);
/** Headers that describe this answer, not the stored one. */
const NOT_REPLAYED = /^(x-ratelimit-|ratelimit|retry-after$|idempotent-replayed$|content-length$|connection$|date$)/i;

const problem = (h: ResponseToolkit, status: number, error: string, message: string) =>
  h.response({ message, error }).code(status).takeover();

/**
 * `Idempotency-Key` on POST, PUT and PATCH (openapi.yaml, info "Idempotency"). The claim runs
 * after validation, just before the handler; the key is scoped to the token, method and path, and a
 * request is "the same" when body and query string are. A 2xx answer is stored: inside the
 * action's transaction when the route uses respondInTransaction, otherwise in onPreResponse.
 * Any other answer releases the key.
 *
 * The claim lives as long as its handler: a heartbeat extends it while the handler runs, also
 * past an answer sent before the handler ended (hapi's request timeout answers 503 and lets the
 * handler run on; a client may go away). Such a key is settled when the handler ends: what it
 * stored stays, a 2xx it returns is stored for the retry to replay, anything else frees the key.
 */
export const idempotencyPlugin: Plugin<IdempotencyOptions> = {
  name: 'loyalty-idempotency',
  register(server, options) {
    const { sql } = options;
    const lockSeconds = options.lockSeconds ?? 30;
    const heartbeatMs = options.heartbeatMs ?? (lockSeconds * 1000) / 3;

    /** Stores a 2xx the handler returned after its request was answered; frees the key otherwise. */
    const settleLate = async (state: IdempotencyState, end: HandlerEnd) => {
      state.settle();
      if (state.stored) return;
      const late = 'result' in end ? lateResponse(end.result) : undefined;
      if (late) await storeIdempotentResponse(sql, state.scope, late);
      else await releaseIdempotencyKey(sql, state.scope);
    };
    const finishAfterHandler = (state: IdempotencyState) => {
      if (state.handler.awaited) return;
      state.handler.awaited = true;
      state.handler.ended.then((end) => settleLate(state, end)).catch(() => {}); // not stored or released: the claim lapses after lockSeconds
    };

    // Every route's handler reports its end to the claim it runs under (hapi has no event for a
    // handler that ends after its request was answered).
    server.events.on('route', (route) => {
      const handler = route.settings.handler;
      if (typeof handler !== 'function') return;
      route.settings.handler = async function (this: unknown, request: Request, h: ResponseToolkit) {
        const state = request.plugins.idempotency;
        if (state) state.handler.started = true;
        const end = (outcome: HandlerEnd) => {
          if (!state) return;
          state.handler.end(outcome);
          // A connection closed under the handler ends the request without onPreResponse (and without 'disconnect').
          if (!request.active()) finishAfterHandler(state);
        };
        try {
          const result = await (handler as Lifecycle.Method).call(this as object | null, request, h);
          end({ result });
          return result;
        } catch (error) {
          end({ error });
          throw error;
        }
      } as Lifecycle.Method;
    });

    server.ext('onPreHandler', async (request: Request, h: ResponseToolkit) => {
      const header = request.headers['idempotency-key'];
      if (header === undefined || !METHODS.has(request.method)) return h.continue;
      const principal = request.auth.credentials?.user;
      if (!request.auth.isAuthenticated || !principal?.tokenHash) return h.continue; // POST /oauth/token
      let key: string;
      try {
        key = parseIdempotencyKey(String(header));
      } catch (error) {
        return problem(h, 400, 'idempotency_key_invalid', (error as Error).message);
      }
      const scope = scopeHash({ tokenHash: principal.tokenHash, method: request.method, path: request.path, key });
      const outcome = await claimIdempotencyKey(sql, {
        scope,
        request: requestHash(request.payload, request.url.search),
        lockSeconds,
        organizationIds: principal.organizationIds,
      });
      switch (outcome.kind) {
        case 'claimed': {
          // Answered while the claim was taken (hapi's request timeout, or the client went away): onPreResponse
          // has been and gone and no handler will run, so nothing would ever settle it. Free it for the retry.
          if (request.response !== null || !request.active()) {
            await releaseIdempotencyKey(sql, scope);
            return h.continue;
          }
          const heartbeat = keepClaimAlive(sql, scope, outcome.claimedAt, lockSeconds, heartbeatMs);
          let resolveEnded!: (outcome: HandlerEnd) => void;
          const ended = new Promise<HandlerEnd>((resolve) => (resolveEnded = resolve));
          const end = (outcome: HandlerEnd) => {
            state.handler.done = true;
            resolveEnded(outcome);
          };
          const state: IdempotencyState = {
            scope,
            stored: false,
            settle: heartbeat.stop,
            handler: { started: false, done: false, awaited: false, ended, end },
            storeInTransaction: async (tx, status, body) => {
              await storeIdempotentResponse(tx, scope, {
                status,
                headers: { 'content-type': JSON_TYPE },
                body: JSON.stringify(body),
              });
              state.stored = true;
            },
          };
          request.plugins.idempotency = state;
          // A client that goes away ends the request without onPreResponse.
          request.events.once('disconnect', () => {
            if (request.plugins.idempotency !== state) return;
            if (state.handler.started)
              finishAfterHandler(state); // stays on the request: respondInTransaction may still store there
            else void settleLate(state, { error: 'disconnected' }).catch(() => {});
          });
          return h.continue;
        }
        case 'replay':
          return replay(h, outcome.response);
        case 'reuse':
          return problem(
            h,
            422,
            'idempotency_key_reuse',
            'This Idempotency-Key was already used with a different request.',
          );
        case 'in_progress':
          return problem(
            h,
            409,
            'idempotency_in_progress',
            'A request with this Idempotency-Key is still being processed.',
          ).header('retry-after', '1');
      }
    });

    // Before the errors plugin, which takes error responses over (later extensions would not run).
    server.ext(
      'onPreResponse',
      async (request: Request, h: ResponseToolkit) => {
        const state = request.plugins.idempotency;
        if (!state || state.handler.awaited) return h.continue;
        const response = request.response as ResponseObject & { isBoom?: boolean };
        const ok = !response.isBoom && response.statusCode >= 200 && response.statusCode < 300;
        if (state.handler.started && !state.handler.done && !ok) {
          // Answered while the handler runs on (a timeout): the key waits for it, and stays on the
          // request so that respondInTransaction still stores in the action's transaction.
          finishAfterHandler(state);
          return h.continue;
        }
        request.plugins.idempotency = undefined; // once
        state.settle();
        if (ok && state.stored) return h.continue;
        const stored = ok ? storable(response) : undefined;
        if (stored) await storeIdempotentResponse(sql, state.scope, stored);
        // A failed answer frees the key; so does a body we cannot keep (a stream), so a retry runs again.
        else await releaseIdempotencyKey(sql, state.scope);
        return h.continue;
      },
      { before: ['loyalty-errors'] },
    );

    purgeWhileStarted(server, options.purgeIntervalMs ?? 10 * 60_000, () => purgeExpiredIdempotencyKeys(sql));
  },
};

/**
 * Extends a claim every `everyMs` until stopped. A beat that fails (the database is away) is
 * retried at the next one; a beat that finds the claim gone (answered, released, taken over)
 * stops.
 */
function keepClaimAlive(sql: Sql, scope: Buffer, claimedAt: string, lockSeconds: number, everyMs: number) {
  let stopped = false;
  let beating = false;
  const timer = setInterval(() => {
    if (beating || stopped) return;
    beating = true;
    extendIdempotencyClaim(sql, scope, claimedAt, lockSeconds).then(
      (alive) => {
        beating = false;
        if (!alive) stop();
      },
      () => {
        beating = false;
      },
    );
  }, everyMs);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { stop };
}

/** The stored answer byte for byte, marked as a replay. */
function replay(h: ResponseToolkit, stored: StoredResponse) {
  const response = h.response(stored.body).code(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) response.header(name, value);
  return response.header('idempotent-replayed', 'true').takeover();
}

/** What a handler that ended after its request was answered returned, as the retry will replay it. */
function lateResponse(result: unknown): StoredResponse | undefined {
  if (result && typeof result === 'object' && 'statusCode' in result && 'variety' in result) {
    const response = result as ResponseObject;
    return response.statusCode >= 200 && response.statusCode < 300 ? storable(response) : undefined;
  }
  if (result === null || result === undefined || typeof result === 'symbol' || (result as { isBoom?: boolean }).isBoom)
    return undefined;
  return typeof result === 'string'
    ? { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: result }
    : { status: 200, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(result) };
}

/**
 * The answer as the client receives it. Plain objects are serialized exactly as hapi does
 * (JSON.stringify without replacer or spacing), so a replay repeats the same bytes.
 */
function storable(response: ResponseObject): StoredResponse | undefined {
  const source = response.source as unknown;
  let body: string;
  if (typeof source === 'string') body = source;
  else if (source === null || source === undefined) body = '';
  else if (response.variety === 'plain' && !Buffer.isBuffer(source)) body = JSON.stringify(source);
  else return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (!NOT_REPLAYED.test(name) && value !== undefined) headers[name.toLowerCase()] = String(value);
  }
  headers['content-type'] ??= typeof source === 'string' ? 'text/html; charset=utf-8' : JSON_TYPE;
  return { status: response.statusCode, headers, body };
}
