import type { Db } from '../db/pool.js';

export type RateLimitPolicy = 'token' | 'ip';

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
 * Counts one request against a bucket and says whether it is allowed: one statement on the
 * UNLOGGED `rate_limits` table, so every server process on the database shares one budget.
 * Fixed windows aligned to the database clock (the one clock all processes agree on); a row
 * whose window has passed restarts at 1.
 */
export async function countRequest(
  db: Db,
  bucket: { policy: RateLimitPolicy; key: string; limit: number; windowSeconds: number },
): Promise<RateLimitState> {
  const w = bucket.windowSeconds;
  const [row] = await db<{ count: number; reset_seconds: number }[]>`
    INSERT INTO rate_limits AS r (bucket, window_start, count)
    VALUES (${`${bucket.policy}:${bucket.key}`}, floor(extract(epoch FROM clock_timestamp()) / ${w}::int)::bigint * ${w}::int, 1)
    ON CONFLICT (bucket) DO UPDATE SET
      count = CASE WHEN r.window_start >= EXCLUDED.window_start THEN r.count + 1 ELSE 1 END,
      window_start = GREATEST(r.window_start, EXCLUDED.window_start)
    RETURNING count, ceil(window_start + ${w}::int - extract(epoch FROM clock_timestamp()))::int AS reset_seconds`;
  const count = row!.count;
  return {
    policy: bucket.policy,
    limit: bucket.limit,
    remaining: Math.max(0, bucket.limit - count),
    resetSeconds: Math.max(1, row!.reset_seconds),
    windowSeconds: w,
    exceeded: count > bucket.limit,
  };
}

/** Drops counters whose window ended long ago (tokens and addresses that went quiet). */
export async function purgeRateLimits(db: Db, windowSeconds: number): Promise<number> {
  const rows = await db`
    DELETE FROM rate_limits WHERE window_start < extract(epoch FROM clock_timestamp()) - ${2 * windowSeconds}::int`;
  return rows.count;
}
