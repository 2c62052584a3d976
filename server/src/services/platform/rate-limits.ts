import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';

/**
 * `token`: each token on its own (keyed by its hash; api-spec: counted per token, a client bounded by its
 * cap of live tokens); `ip`: requests without a valid token, by address.
 */
export type RateLimitPolicy = 'token' | 'ip';

export type Bucket = {
  policy: RateLimitPolicy;
  key: string;
  limit: number;
  windowSeconds: number;
  /**
   * The hash of the token whose requests this bucket counts (access_tokens.token_hash): they are
   * counted only while its row is live (not revoked, not expired on its organizations' clocks),
   * checked in the counting statement itself, so a token revoked or expired by any process is
   * seen on its very next request without a statement more.
   */
  liveToken?: Buffer;
};

export type RateLimitState = {
  policy: RateLimitPolicy;
  limit: number;
  /** Requests left in the current window (never below 0). */
  remaining: number;
  /** Whole seconds until the current window ends (at least 1). */
  resetSeconds: number;
  windowSeconds: number;
  exceeded: boolean;
};

/**
 * Adds `n` requests to a bucket in one statement on the UNLOGGED `rate_limits` table, so every
 * server process on the database shares one budget, and returns the count after them. Fixed
 * windows aligned to the database clock (the one clock all processes agree on); a row whose
 * window has passed restarts. `null`: the bucket's `liveToken` is no longer live; nothing was counted.
 */
export async function addRequests(
  db: Db,
  bucket: Bucket,
  n: number,
): Promise<{ count: number; resetSeconds: number } | null> {
  const w = bucket.windowSeconds;
  const whileLive = bucket.liveToken
    ? db`WHERE EXISTS (SELECT FROM access_tokens WHERE token_hash = ${bucket.liveToken}
                                                 AND expires_at > loyalty_now_latest(organization_ids))`
    : db``;
  const rows = await db<{ count: number; reset_seconds: number }[]>`
    INSERT INTO rate_limits AS r (bucket, window_start, count)
    SELECT ${`${bucket.policy}:${bucket.key}`}, floor(extract(epoch FROM clock_timestamp()) / ${w}::int)::bigint * ${w}::int, ${n}::int
    ${whileLive}
    ON CONFLICT (bucket) DO UPDATE SET
      count = CASE WHEN r.window_start >= EXCLUDED.window_start THEN r.count + EXCLUDED.count ELSE EXCLUDED.count END,
      window_start = GREATEST(r.window_start, EXCLUDED.window_start)
    RETURNING count, ceil(window_start + ${w}::int - extract(epoch FROM clock_timestamp()))::int AS reset_seconds`;
  if (bucket.liveToken && rows.length === 0) return null;
  const row = firstRow(rows, 'the counted rate limit row');
  return { count: row.count, resetSeconds: Math.max(1, row.reset_seconds) };
}

const stateAt = (bucket: Bucket, count: number, resetSeconds: number): RateLimitState => ({
  policy: bucket.policy,
  limit: bucket.limit,
  remaining: Math.max(0, bucket.limit - count),
  resetSeconds,
  windowSeconds: bucket.windowSeconds,
  exceeded: count > bucket.limit,
});

/**
 * Counts one request against a bucket and says whether it is allowed (one statement); `null` when
 * the bucket's `liveToken` is not live (nothing counted).
 */
export async function countRequest(db: Db, bucket: Bucket): Promise<RateLimitState | null> {
  const added = await addRequests(db, bucket, 1);
  return added && stateAt(bucket, added.count, added.resetSeconds);
}

type Waiter = { resolve: (state: RateLimitState | null) => void; reject: (error: unknown) => void };

/**
 * `countRequest` for a busy process: while a statement for a bucket is on its way, requests for
 * the same bucket queue up and the next statement adds them all at once (`count + n`), each
 * taking its own position in the count. So a request costs at most one statement, counting
 * stays exact across processes, and one busy token does not turn into a queue of updates
 * waiting on each other's lock of the same row. A request is answered by a statement that starts
 * after it arrived, so a `liveToken` check sees every revocation committed before the request.
 */
export function createRequestCounter(db: Db) {
  const queues = new Map<string, { bucket: Bucket; waiters: Waiter[] }>();
  const busy = new Set<string>();

  const flush = (id: string) => {
    const queue = queues.get(id);
    if (!queue) {
      busy.delete(id);
      return;
    }
    queues.delete(id);
    busy.add(id);
    const { bucket, waiters } = queue;
    addRequests(db, bucket, waiters.length)
      .then(
        (added) => {
          if (!added) {
            for (const w of waiters) w.resolve(null);
            return;
          }
          const { count, resetSeconds } = added;
          let position = count - waiters.length + 1;
          for (const w of waiters) w.resolve(stateAt(bucket, position++, resetSeconds));
        },
        (error: unknown) => {
          for (const w of waiters) w.reject(error);
        },
      )
      .finally(() => flush(id));
  };

  return function count(bucket: Bucket): Promise<RateLimitState | null> {
    const id = `${bucket.policy}:${bucket.key}`;
    return new Promise<RateLimitState | null>((resolve, reject) => {
      const queue = queues.get(id) ?? { bucket, waiters: [] };
      queue.waiters.push({ resolve, reject });
      queues.set(id, queue);
      if (!busy.has(id)) flush(id);
    });
  };
}

/** Drops counters whose window ended long ago (tokens and addresses that went quiet). */
export async function purgeRateLimits(db: Db, windowSeconds: number): Promise<number> {
  const rows = await db`
    DELETE FROM rate_limits WHERE window_start < extract(epoch FROM clock_timestamp()) - ${2 * windowSeconds}::int`;
  return rows.count;
}
