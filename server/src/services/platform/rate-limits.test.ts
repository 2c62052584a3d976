import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { unixSocketOf, type Sql } from '../../db/pool.js';
import {
  type Bucket,
  countRequest,
  createRequestCounter,
  purgeRateLimits,
  type RateLimitState,
} from './rate-limits.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

// An hour-long window: a test's requests never straddle a window boundary.
const bucket = (key: string, limit = 3, windowSeconds = 3600) => ({
  policy: 'token' as const,
  key,
  limit,
  windowSeconds,
});

/** The state of a count; a bucket without `liveToken` is always counted. */
const counted = async (pending: Promise<RateLimitState | null>): Promise<RateLimitState> => {
  const state = await pending;
  if (!state) throw new Error('a bucket without liveToken was not counted');
  return state;
};
const countOne = (b: Bucket) => counted(countRequest(db.sql, b));

describe('countRequest', () => {
  it('counts down the remaining requests, then reports the limit exceeded with the seconds to reset', async () => {
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await countOne(bucket('a')));
    expect(seen.map((s) => [s.remaining, s.exceeded])).toEqual([
      [2, false],
      [1, false],
      [0, false],
      [0, true],
    ]);
    for (const s of seen) {
      expect(s.limit).toBe(3);
      expect(s.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(s.resetSeconds).toBeLessThanOrEqual(3600);
    }
  });

  it('keeps buckets apart: per policy and per key', async () => {
    await countOne(bucket('b', 1));
    expect((await countOne(bucket('b', 1))).exceeded).toBe(true);
    expect((await countOne(bucket('c', 1))).exceeded).toBe(false);
    expect((await countOne({ ...bucket('b', 1), policy: 'ip' })).exceeded).toBe(false);
  });

  it('counts concurrent requests exactly (one atomic statement each)', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, () => countOne(bucket('d', 25))));
    expect(results.filter((r) => r.exceeded)).toHaveLength(15);
    expect(
      results
        .map((r) => r.remaining)
        .sort((x, y) => x - y)
        .slice(-1)[0],
    ).toBe(24);
  });

  it('starts a new window when the old one has passed', async () => {
    expect((await countOne(bucket('e', 1))).exceeded).toBe(false);
    expect((await countOne(bucket('e', 1))).exceeded).toBe(true);
    // As if the hour had passed.
    await db.sql`UPDATE rate_limits SET window_start = window_start - 3600 WHERE bucket = 'token:e'`;
    expect(await countOne(bucket('e', 1))).toMatchObject({ exceeded: false, remaining: 0 });
  });

  it('purges counters of windows long gone and keeps current ones', async () => {
    await countOne(bucket('f'));
    await db.sql`INSERT INTO rate_limits (bucket, window_start, count) VALUES ('token:old', 1000, 5)`;
    expect(await purgeRateLimits(db.sql, 3600)).toBeGreaterThanOrEqual(1);
    const rows = await db.sql<
      { bucket: string }[]
    >`SELECT bucket FROM rate_limits WHERE bucket IN ('token:old', 'token:f')`;
    expect(rows.map((r) => r.bucket)).toEqual(['token:f']);
  });
});

describe('a bucket with liveToken', () => {
  it('is counted while the token is live; once it is revoked or expired, nothing is counted (null)', async () => {
    const hash = randomBytes(32);
    await db.sql`INSERT INTO access_tokens (token_hash, client_id, organization_ids, abilities, expires_at)
                 VALUES (${hash}, 'acme-admin', ${['org-acme']}, '{}', now() + interval '1 hour')`;
    const live = { ...bucket('live'), liveToken: hash };
    expect(await countRequest(db.sql, live)).toMatchObject({ remaining: 2 });
    const countIn = createRequestCounter(db.sql);
    expect(await countIn(live)).toMatchObject({ remaining: 1 });
    await db.sql`UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ${hash}`;
    expect(await countRequest(db.sql, live)).toBeNull();
    await db.sql`DELETE FROM access_tokens WHERE token_hash = ${hash}`;
    expect(await Promise.all([countIn(live), countIn(live)])).toEqual([null, null]);
    const [row] = await db.sql<{ count: number }[]>`SELECT count FROM rate_limits WHERE bucket = 'token:live'`;
    expect(row?.count).toBe(2);
  });
});

describe('createRequestCounter', () => {
  it('folds simultaneous requests for one bucket into fewer statements, each request keeping its own exact position', async () => {
    let statements = 0;
    const counting = postgres(db.url, {
      ...unixSocketOf(db.url),
      max: 4,
      onnotice: () => {},
      debug: () => void statements++,
    }) as unknown as Sql;
    try {
      await counting`SELECT 1`;
      statements = 0;
      const countIn = createRequestCounter(counting);
      const count = (b: Bucket) => counted(countIn(b));
      const results = await Promise.all(Array.from({ length: 40 }, () => count(bucket('g', 25))));
      expect(results.map((r) => r.remaining).sort((x, y) => y - x)).toEqual([
        ...Array.from({ length: 25 }, (_, i) => 24 - i),
        ...Array(15).fill(0),
      ]);
      expect(results.filter((r) => r.exceeded)).toHaveLength(15);
      expect(statements).toBeLessThan(40);
      expect(statements).toBeGreaterThanOrEqual(1);
      // Another process (here: a plain countRequest) shares the same count.
      expect((await countOne(bucket('g', 25))).exceeded).toBe(true);
      // Different buckets do not wait for each other.
      const [a, b] = await Promise.all([count(bucket('h', 1)), count(bucket('i', 1))]);
      expect([a.exceeded, b.exceeded]).toEqual([false, false]);
    } finally {
      await counting.end();
    }
  });

  it('passes a database error to every request of the batch, then keeps working', async () => {
    const countIn = createRequestCounter(db.sql);
    const count = (b: Bucket) => counted(countIn(b));
    const bad = { ...bucket('j'), windowSeconds: 0 }; // division by zero in SQL
    const results = await Promise.allSettled([count(bad), count(bad), count(bad)]);
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect((await count(bucket('j'))).exceeded).toBe(false);
  });
});
