import type { Db } from '../../db/pool.js';
import { defined, firstRow } from '../../lib/defined.js';
import { canonicalJson, sha256 } from '../../lib/hash.js';
import { DomainError } from './errors.js';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
export const MAX_KEY_LENGTH = 255;

export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

/**
 * `claimedAt` names this claim: the row's created_at to the microsecond, as text (a JS Date keeps
 * milliseconds only). A heartbeat extends its own claim only, never one another request took over.
 */
export type ClaimOutcome =
  | { kind: 'claimed'; claimedAt: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'reuse' }
  | { kind: 'in_progress' };

export type KeyScope = { tokenHash: string; method: string; path: string; key: string };

/**
 * The key as the client meant it: the IETF draft sends a quoted string (`"abc"`), others send it
 * bare; the quotes are not part of the key. Outside 1..255 characters, or with a quote inside: 400.
 */
export function parseIdempotencyKey(header: string): string {
  const quoted = header.length >= 2 && header.startsWith('"') && header.endsWith('"');
  const key = quoted ? header.slice(1, -1) : header;
  if (key.length < 1 || key.length > MAX_KEY_LENGTH || key.includes('"')) {
    throw new DomainError(
      'bad_request',
      'idempotency_key_invalid',
      `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} characters (optionally in double quotes).`,
    );
  }
  return key;
}

export const scopeHash = (s: KeyScope): Buffer => sha256(s.tokenHash, s.method.toUpperCase(), s.path, s.key);

/**
 * "Same request" means the same body and the same query string. The body counts as JSON, in
 * canonical form: the same keys and values in another order or spacing are the same request.
 */
export const requestHash = (body: unknown, queryString: string): Buffer =>
  sha256(defined(canonicalJson(body ?? null), 'the canonical JSON of the request body'), queryString);

type Row = {
  claimed: string | null;
  request_hash: Buffer | null;
  state: 'in_progress' | 'done' | null;
  stale: boolean | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
};

/**
 * Claims a key for a request, or says what to answer instead. One statement on the common paths:
 * it reads the key's row and, when there is none, inserts the claim (`ON CONFLICT DO NOTHING`
 * settles two first requests racing); a replay therefore costs this single read and takes no
 * lock. Only rarer paths take a second statement: a row that expired or was abandoned by a crash
 * (`locked_until` passed) is taken over with a conditional UPDATE, and a lost insert race
 * re-reads the winner's row.
 */
export async function claimIdempotencyKey(
  db: Db,
  input: {
    scope: Buffer;
    request: Buffer;
    lockSeconds: number;
    ttlSeconds?: number;
    /** The token's organizations: the key's lifetime follows the latest of their clocks (sandbox mode). */
    organizationIds?: readonly string[];
  },
): Promise<ClaimOutcome> {
  const ttl = input.ttlSeconds ?? IDEMPOTENCY_TTL_SECONDS;
  const orgs = [...(input.organizationIds ?? [])];
  for (let attempt = 0; attempt < 3; attempt++) {
    const rows = await db<Row[]>`
      WITH existing AS (
        SELECT request_hash, state, response_status, response_headers, response_body,
               (expires_at <= loyalty_now_latest(organization_ids) OR (state = 'in_progress' AND locked_until <= now())) AS stale
        FROM idempotency_keys WHERE scope_hash = ${input.scope}
      ), claim AS (
        INSERT INTO idempotency_keys (scope_hash, request_hash, state, locked_until, expires_at, organization_ids)
        SELECT ${input.scope}, ${input.request}, 'in_progress',
               now() + make_interval(secs => ${input.lockSeconds}), loyalty_now_latest(${orgs}::text[]) + make_interval(secs => ${ttl}), ${orgs}::text[]
        WHERE NOT EXISTS (SELECT 1 FROM existing)
        ON CONFLICT (scope_hash) DO NOTHING
        RETURNING created_at::text
      )
      SELECT (SELECT created_at FROM claim) AS claimed, e.*
      FROM (VALUES (1)) AS one (x) LEFT JOIN existing e ON true`;
    const row = firstRow(rows, 'the row of the idempotency key');
    if (row.claimed) return { kind: 'claimed', claimedAt: row.claimed };
    if (!row.state) continue; // lost the insert race to a request whose row this snapshot cannot see: read again
    if (row.stale) {
      const [taken] = await db<{ claimed: string }[]>`
        UPDATE idempotency_keys SET request_hash = ${input.request}, state = 'in_progress',
          locked_until = now() + make_interval(secs => ${input.lockSeconds}),
          created_at = now(), expires_at = loyalty_now_latest(organization_ids) + make_interval(secs => ${ttl}),
          response_status = NULL, response_headers = NULL, response_body = NULL
        WHERE scope_hash = ${input.scope}
          AND (expires_at <= loyalty_now_latest(organization_ids) OR (state = 'in_progress' AND locked_until <= now()))
        RETURNING created_at::text AS claimed`;
      if (taken) return { kind: 'claimed', claimedAt: taken.claimed };
      continue; // another request took it over first
    }
    if (!input.request.equals(defined(row.request_hash, 'the request hash of the key'))) return { kind: 'reuse' };
    if (row.state === 'in_progress') return { kind: 'in_progress' };
    return {
      kind: 'replay',
      response: {
        status: defined(row.response_status, 'the stored response status'),
        headers: row.response_headers ?? {},
        body: defined(row.response_body, 'the stored response body'),
      },
    };
  }
  // Three rounds of losing races means the key is very busy right now.
  return { kind: 'in_progress' };
}

/**
 * Pushes a live claim's `locked_until` another `lockSeconds` ahead (the plugin's heartbeat while
 * its request runs), from the moment the beat lands. False when the claim is no longer this
 * request's: answered, released, or taken over after a pause longer than the lock (the database
 * was away).
 *
 * The row is locked first (the CTE), then the new value computed: an UPDATE that waits on a row
 * only locked by another transaction keeps the value it computed before the wait, so a beat that
 * waited past the lock wrote a locked_until already past, and a takeover queued behind it ran the
 * action a second time.
 */
export async function extendIdempotencyClaim(
  db: Db,
  scope: Buffer,
  claimedAt: string,
  lockSeconds: number,
): Promise<boolean> {
  const rows = await db`
    WITH mine AS (
      SELECT scope_hash FROM idempotency_keys
      WHERE scope_hash = ${scope} AND state = 'in_progress' AND created_at = ${claimedAt}::text::timestamptz
      FOR UPDATE
    )
    UPDATE idempotency_keys k SET locked_until = clock_timestamp() + make_interval(secs => ${lockSeconds})
    FROM mine WHERE k.scope_hash = mine.scope_hash`;
  return rows.count === 1;
}

/** Records the response of a claimed key (in the action's own transaction where there is one). */
export async function storeIdempotentResponse(
  db: Db,
  scope: Buffer,
  response: StoredResponse,
  ttlSeconds = IDEMPOTENCY_TTL_SECONDS,
): Promise<void> {
  await db`
    UPDATE idempotency_keys SET state = 'done', locked_until = NULL, response_status = ${response.status},
      response_headers = ${db.json(response.headers)}, response_body = ${response.body},
      expires_at = loyalty_now_latest(organization_ids) + make_interval(secs => ${ttlSeconds})
    WHERE scope_hash = ${scope} AND state = 'in_progress'`;
}

/** Frees a claimed key after a non-2xx answer, so the client may use it again. */
export async function releaseIdempotencyKey(db: Db, scope: Buffer): Promise<void> {
  await db`DELETE FROM idempotency_keys WHERE scope_hash = ${scope} AND state = 'in_progress'`;
}

/** Deletes stored responses past their 24 hours (on their organizations' clock; no key expires later than the greatest offset). */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const rows = await db`
    DELETE FROM idempotency_keys
    WHERE expires_at <= now() + make_interval(secs => (SELECT coalesce(max(offset_seconds), 0) FROM sandbox_clocks))
      AND expires_at <= loyalty_now_latest(organization_ids)`;
  return rows.count;
}
