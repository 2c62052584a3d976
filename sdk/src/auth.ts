/**
 * Bearer tokens: a fixed token, or OAuth client credentials fetched from `POST /oauth/token`
 * and refreshed shortly before `expires_in` runs out. Concurrent callers share one token
 * request (single flight).
 */

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Abilities to request (space-separated or a list); default: all the client's abilities. */
  scope?: string | readonly string[];
}

export interface TokenSource {
  /**
   * The token to send. When the token endpoint refuses (for example 401 `invalid_client`), its
   * response is returned instead, so the failed call reports it as its own error value.
   */
  get(signal?: AbortSignal): Promise<string | Response>;
  /** After a 401 with `token`: forget it if it is still current. False when a new token cannot help. */
  invalidate(token: string): boolean;
}

export function fixedToken(token: string): TokenSource {
  return { get: () => Promise.resolve(token), invalidate: () => false };
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

export function clientCredentialsToken(
  baseUrl: string,
  credentials: ClientCredentials,
  send: (request: Request) => Promise<Response>,
): TokenSource {
  let token: string | undefined;
  let refreshAt = 0;
  let pending: Promise<string | Refused> | undefined;
  const scope = typeof credentials.scope === 'string' ? credentials.scope : credentials.scope?.join(' ');

  async function request(): Promise<string | Refused> {
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
    // Refresh a minute early (a tenth of the lifetime for short-lived tokens).
    refreshAt = Date.now() + lifetimeMs - Math.min(60_000, lifetimeMs / 10);
    token = body.access_token;
    return token;
  }

  return {
    async get(signal) {
      if (token !== undefined && Date.now() < refreshAt) return token;
      pending ??= request().finally(() => (pending = undefined));
      const result = await raceAbort(pending, signal);
      return typeof result === 'string' ? result : new Response(result.body, { status: result.status, headers: result.headers });
    },
    invalidate(used) {
      if (used === token) token = undefined;
      return true;
    },
  };
}
