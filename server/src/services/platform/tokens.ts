import type { Schemas } from '../../lib/schemas.js';
import { hash as digest, timingSafeEqual } from 'node:crypto';
import type { Db, Sql } from '../../db/pool.js';
import { randomToken, sha256 } from '../../lib/hash.js';
import { DomainError } from './errors.js';
import type { OrganizationScope } from './organization-scope.js';

export const TOKEN_TTL_SECONDS = 3600;

/**
 * Live tokens one client may hold: issuing one more deletes its oldest (openapi.yaml, POST
 * /oauth/token), so minting tokens cannot multiply what a client is given per token.
 */
export const LIVE_TOKENS_PER_CLIENT = 20;

/**
 * How long a process keeps a resolved token in its cache. Revocation does not wait for it: every
 * request's rate-limit statement checks the token is still live (plugins/rate-limit.ts, `admit`).
 */
export const TOKEN_CACHE_MS = 60_000;

/** A token's identity: the organizations it reaches (its OrganizationScope), its abilities and device. */
export type Principal = OrganizationScope & {
  clientId: string;
  tokenHash: string;
  deviceId: string | null;
  abilities: string[];
  expiresAt: number;
  /** An access_tokens row (revoked by deleting it): every request checks it is still live. False for the sandbox operator. */
  revocable: boolean;
};

const oauthError = (
  kind: 'bad_request' | 'unauthenticated',
  error: Schemas['OAuthError']['error'],
  description: string,
) => new DomainError(kind, error, description, { body: { error, error_description: description } });

/** RFC 6749 §5.2: a malformed token request is a 400 with an OAuth error code, never a 422. */
export const oauthValidationError = (fields: Record<string, string[]>) =>
  'grant_type' in fields &&
  !Object.values(fields)
    .flat()
    .some((m) => /required/.test(m))
    ? oauthError('bad_request', 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
    : oauthError('bad_request', 'invalid_request', Object.values(fields).flat().join(' '));

/** OAuth 2.0 client credentials grant (RFC 6749 §4.4). */
export async function issueToken(
  sql: Sql,
  input: { grant_type?: string; client_id?: string; client_secret?: string; scope?: string },
) {
  if (input.grant_type !== 'client_credentials') {
    if (!input.grant_type) throw oauthError('bad_request', 'invalid_request', 'grant_type is required.');
    throw oauthError('bad_request', 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  }
  if (!input.client_id || !input.client_secret)
    throw oauthError('unauthenticated', 'invalid_client', 'Client authentication failed.');
  const [client] = await sql<
    {
      client_id: string;
      secret_hash: Buffer;
      device_id: string | null;
      organization_ids: string[];
      abilities: string[];
      device_org: string | null;
    }[]
  >`
    SELECT c.client_id, c.secret_hash, c.device_id, c.organization_ids, c.abilities, d.organization_id AS device_org
    FROM clients c LEFT JOIN devices d ON d.id = c.device_id WHERE c.client_id = ${input.client_id}`;
  const given = sha256(input.client_secret);
  if (!client || !timingSafeEqual(given, client.secret_hash))
    throw oauthError('unauthenticated', 'invalid_client', 'Client authentication failed.');
  const requested = input.scope?.trim() ? input.scope.trim().split(/\s+/) : client.abilities;
  const lacking = requested.filter((a) => !client.abilities.includes(a));
  if (lacking.length)
    throw oauthError(
      'bad_request',
      'invalid_scope',
      `The client lacks the requested abilities: ${lacking.join(', ')}.`,
    );
  const token = randomToken(32);
  const organizationIds = client.device_id ? (client.device_org ? [client.device_org] : []) : client.organization_ids;
  // One client's issues one at a time (an advisory lock of the client, held to commit): concurrent
  // cap DELETEs of one client each saw their own set of rows and locked them in different orders,
  // a deadlock (40P01) and a 500 for token requests (50 at once on PostgreSQL 15). Other clients
  // never wait (their own lock).
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${`loyalty_client_tokens:${client.client_id}`}))`;
    await tx`INSERT INTO access_tokens (token_hash, client_id, organization_ids, device_id, abilities, expires_at)
             VALUES (${sha256(token)}, ${client.client_id}, ${organizationIds}, ${client.device_id}, ${[...new Set(requested)]},
                     loyalty_now_latest(${organizationIds}::text[]) + make_interval(secs => ${TOKEN_TTL_SECONDS}))`;
    // The cap of live tokens: the client's newest LIVE_TOKENS_PER_CLIENT stay (access_tokens_client_idx).
    await tx`DELETE FROM access_tokens WHERE client_id = ${client.client_id} AND token_hash IN (
               SELECT token_hash FROM access_tokens WHERE client_id = ${client.client_id}
               ORDER BY created_at DESC, token_hash OFFSET ${LIVE_TOKENS_PER_CLIENT})`;
  });
  return {
    token_type: 'Bearer' as const,
    access_token: token,
    expires_in: TOKEN_TTL_SECONDS,
    scope: [...new Set(requested)].join(' '),
  };
}

/**
 * Resolves a bearer token. Tokens never change after issue (their row only goes: revoked, or
 * expired, which every request's rate-limit statement checks), so an in-process cache saves the
 * lookup on the hot path, also for many tokens each seen every few seconds; expiry on this
 * process's clock is still checked here on every request. In sandbox mode `clock`
 * is the sandbox clocks: a token expires on the latest clock of its organizations (a token of
 * several ends when any of their clocks passes its hour), and a reset voids the cache.
 * The cache is keyed by the token's hash (never the token), taken with the one-shot
 * `crypto.hash`: the same bytes as `sha256(token)` of lib/hash.ts, at a fifth of its cost
 * (0.5 against 2.6 µs, the largest item of the auth step in a profile of GET /tags).
 */
export function createTokenResolver(
  db: Db,
  {
    cacheMs = TOKEN_CACHE_MS,
    maxEntries = 10_000,
    clock,
  }: {
    cacheMs?: number;
    maxEntries?: number;
    clock?: { nowMs(organizationIds: readonly string[]): number; generation(): number };
  } = {},
) {
  const cache = new Map<string, { principal: Principal | null; until: number; generation: number }>();
  return async function resolve(token: string): Promise<Principal | null> {
    const key = tokenKey(token);
    const now = Date.now();
    const generation = clock?.generation() ?? 0;
    const hit = cache.get(key);
    if (hit && hit.until > now && hit.generation === generation)
      return hit.principal && hit.principal.expiresAt > (clock?.nowMs(hit.principal.organizationIds) ?? now)
        ? hit.principal
        : null;
    const [row] = await db<
      {
        client_id: string;
        organization_ids: string[];
        device_id: string | null;
        abilities: string[];
        expires_at: Date;
      }[]
    >`
      SELECT client_id, organization_ids, device_id, abilities, expires_at FROM access_tokens
      WHERE token_hash = ${Buffer.from(key, 'base64')} AND expires_at > loyalty_now_latest(organization_ids)`;
    const principal = row
      ? {
          clientId: row.client_id,
          tokenHash: key,
          organizationIds: row.organization_ids,
          deviceId: row.device_id,
          abilities: row.abilities,
          expiresAt: row.expires_at.getTime(),
          revocable: true,
        }
      : null;
    if (cache.size >= maxEntries) cache.clear();
    cache.set(key, { principal, until: now + (principal ? cacheMs : 1000), generation });
    return principal;
  };
}

/** base64 of `sha256(token)` (lib/hash.ts: the token, then a NUL), in one call. */
export const tokenKey = (token: string): string => digest('sha256', `${token}\0`, 'base64');
