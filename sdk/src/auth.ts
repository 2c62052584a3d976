/**
 * Bearer tokens: a fixed token, or OAuth client credentials fetched from `POST /oauth/token`.
 * Concurrent callers share one token request (single flight).
 *
 * Idempotency keys are scoped to the token, so a call keeps the token of its first attempt for
 * all its retries (transport.ts), and a token is renewed while what is left of it still outlasts
 * any call that starts with it: a call's span (its retry deadline plus a margin). A token that
 * lives less than twice that span is renewed at half its lifetime instead, and a call pinned to
 * it starts no retry once the token is about to expire (`sendUntil`).
 */

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Abilities to request (space-separated or a list); default: all the client's abilities. */
  scope?: string | readonly string[];
}

/** Time beyond a call's retry deadline that a token must still live when a call takes it. */
export const TOKEN_MARGIN_MS = 30_000;
/** No attempt is started with a token this close to its expiry (at most a tenth of its lifetime). */
export const TOKEN_SEND_MARGIN_MS = 1_000;

export interface Token {
  value: string;
  /**
   * The last moment to start an attempt with it: its expiry by this machine's clock, counted from
   * when the token was requested (so never later than the server's), less `TOKEN_SEND_MARGIN_MS`.
   */
  sendUntil: number;
}

export interface TokenSource {
  /**
   * A token that outlives a call starting now. When the token endpoint refuses (for example 401
   * `invalid_client`), its response is returned instead, so the failed call reports it as its
   * own error value.
   */
  get(signal?: AbortSignal): Promise<Token | Response>;
  /** After a 401 with `token`: forget it if it is still current. False when a new token cannot help. */
  invalidate(token: string): boolean;
}

export function fixedToken(token: string): TokenSource {
  const fixed: Token = { value: token, sendUntil: Infinity };
  return { get: () => Promise.resolve(fixed), invalidate: () => false };
}

interface Refused {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Stops waiting (not the shared request) when `signal` aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * `callSpanMs`: how long a call may go on using the token it started with (its retry deadline
 * plus `TOKEN_MARGIN_MS`; Infinity when unbounded).
 */
export function clientCredentialsToken(
  baseUrl: string,
  credentials: ClientCredentials,
  send: (request: Request) => Promise<Response>,
  callSpanMs: number,
): TokenSource {
  let token: Token | undefined;
  let renewAt = 0;
  let pending: Promise<Token | Refused> | undefined;
  const scope = typeof credentials.scope === 'string' ? credentials.scope : credentials.scope?.join(' ');

  async function request(): Promise<Token | Refused> {
    const requestedAt = Date.now();
    const response = await send(
      new Request(`${baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: credentials.clientId,
          client_secret: credentials.clientSecret,
          ...(scope ? { scope } : {}),
        }),
      }),
    );
    const text = await response.text();
    if (!response.ok) return { status: response.status, headers: [...response.headers], body: text };
    const body = JSON.parse(text) as { access_token: string; expires_in?: number };
    const lifetimeMs = (body.expires_in ?? 3600) * 1000;
    const expiresAt = requestedAt + lifetimeMs;
    // Handed to new calls while what is left outlasts a call; half the lifetime when it is shorter.
    renewAt = expiresAt - Math.min(callSpanMs, lifetimeMs / 2);
    token = { value: body.access_token, sendUntil: expiresAt - Math.min(TOKEN_SEND_MARGIN_MS, lifetimeMs / 10) };
    return token;
  }

  return {
    async get(signal) {
      if (token !== undefined && Date.now() < renewAt) return token;
      pending ??= request().finally(() => (pending = undefined));
      const result = await raceAbort(pending, signal);
      return 'value' in result ? result : new Response(result.body, { status: result.status, headers: result.headers });
    },
    invalidate(used) {
      if (used === token?.value) token = undefined;
      return true;
    },
  };
}
