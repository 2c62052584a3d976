// Access tokens from client credentials are kept between runs (in the config directory, mode
// 0600), because every `loyalty` invocation would otherwise request a new one:
// - POST /oauth/token counts against the small per-IP limit (60/min), which scripts that
//   call `loyalty` in a loop would exhaust;
// - idempotency keys are scoped to the token, so a resumed import only replays the batches
//   of the crashed run (instead of re-running them) when it uses the same token.
// The SDK still decides when to fetch and refresh; this only answers its token request from
// the cache while the cached token has time left, and forgets a token the API refuses.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writePrivateFile } from './settings.js';

export type FetchLike = (request: Request) => Promise<Response>;

interface CachedToken {
  access_token: string;
  scope?: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

/** A cached token is used only while it has at least this long to live. */
const MIN_REMAINING_MS = 5 * 60_000;

export function tokenCacheKey(apiUrl: string, clientId: string, clientSecret: string): string {
  return createHash('sha256').update(`${apiUrl}\n${clientId}\n${clientSecret}`).digest('hex');
}

export function cachingTokenFetch(options: {
  configDir: string;
  key: string;
  fetch?: FetchLike;
  now?: () => number;
}): FetchLike {
  const path = join(options.configDir, 'tokens.json');
  const now = options.now ?? Date.now;
  const inner: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));

  const read = async (): Promise<Record<string, CachedToken>> => {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as Record<string, CachedToken>;
    } catch {
      return {};
    }
  };
  const update = async (change: (cache: Record<string, CachedToken>) => void): Promise<void> => {
    const cache = await read();
    for (const [key, entry] of Object.entries(cache)) if (entry.expires_at <= now()) delete cache[key];
    change(cache);
    await writePrivateFile(options.configDir, path, `${JSON.stringify(cache)}\n`).catch(() => undefined);
  };

  return async (request) => {
    const isTokenRequest = request.method === 'POST' && new URL(request.url).pathname.endsWith('/oauth/token');
    if (isTokenRequest) {
      const cached = (await read())[options.key];
      if (cached && cached.expires_at - now() > MIN_REMAINING_MS) {
        const body = {
          token_type: 'Bearer',
          access_token: cached.access_token,
          expires_in: Math.floor((cached.expires_at - now()) / 1000),
          scope: cached.scope ?? '',
        };
        return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
      }
      const response = await inner(request);
      if (response.ok) {
        const body = (await response
          .clone()
          .json()
          .catch(() => undefined)) as { access_token?: string; expires_in?: number; scope?: string } | undefined;
        if (body?.access_token) {
          const entry: CachedToken = {
            access_token: body.access_token,
            expires_at: now() + (body.expires_in ?? 3600) * 1000,
            ...(body.scope ? { scope: body.scope } : {}),
          };
          await update((cache) => {
            cache[options.key] = entry;
          });
        }
      }
      return response;
    }
    const sentWith = request.headers.get('authorization');
    const response = await inner(request);
    if (response.status === 401 && sentWith) {
      await update((cache) => {
        const cached = cache[options.key];
        if (cached && sentWith === `Bearer ${cached.access_token}`) delete cache[options.key];
      });
    }
    return response;
  };
}
