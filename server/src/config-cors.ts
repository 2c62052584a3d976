/**
 * LOYALTY_CORS_ORIGINS (issue 29): which web pages of other origins may call the server from a
 * browser. Unset: none; browsers refuse every cross-origin read. A comma list of exact origins
 * (`https://admin.example.com,http://localhost:5173`) opens every route a browser has a use for,
 * and `*` opens only the routes that take no credential (see lib/cors.ts).
 */
export type CorsConfig = {
  /** Exact origins (`scheme://host[:port]`) allowed on every route group that answers CORS. */
  origins: string[];
  /** `*`: any origin, on the routes that take no token and no client secret only. */
  anyOrigin: boolean;
};

export const NO_CORS: CorsConfig = { origins: [], anyOrigin: false };

/** The setting, or the problems that stop the start, each naming the variable and the wrong entry. */
export function parseCorsOrigins(text: string | undefined): { cors: CorsConfig; problems: string[] } {
  const entries = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const problems: string[] = [];
  const origins: string[] = [];
  for (const entry of entries) {
    if (entry === '*') continue;
    const origin = originOf(entry);
    if (origin === entry) origins.push(entry);
    else
      problems.push(
        `LOYALTY_CORS_ORIGINS: ${JSON.stringify(entry)} is not an exact origin (scheme://host[:port] of http or https, ` +
          `no path, no trailing slash, no wildcard${origin ? `; did you mean ${origin}?` : ''}), or * alone for the routes without a token`,
      );
  }
  return { cors: { origins: [...new Set(origins)], anyOrigin: entries.includes('*') }, problems };
}

function originOf(entry: string): string | undefined {
  try {
    const url = new URL(entry);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return entry.includes('*') ? undefined : url.origin;
  } catch {
    return undefined;
  }
}
