import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { unixSocketOf, type Sql } from '../../db/pool.js';
import { countRequest, createRequestCounter, purgeRateLimits } from './rate-limits.js';

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

describe('countRequest', () => {
  it('counts down the remaining requests, then reports the limit exceeded with the seconds to reset', async () => {
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await countRequest(db.sql, bucket('a')));
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
    await countRequest(db.sql, bucket('b', 1));
    expect((await countRequest(db.sql, bucket('b', 1))).exceeded).toBe(true);
    expect((await countRequest(db.sql, bucket('c', 1))).exceeded).toBe(false);
    expect((await countRequest(db.sql, { ...bucket('b', 1), policy: 'ip' })).exceeded).toBe(false);
  });

  it('counts concurrent requests exactly (one atomic statement each)', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, () => countRequest(db.sql, bucket('d', 25))));
    expect(results.filter((r) => r.exceeded)).toHaveLength(15);
    expect(
      results
        .map((r) => r.remaining)
        .sort((x, y) => x - y)
        .slice(-1)[0],
    ).toBe(24);
  });

  it('starts a new window when the old one has passed', async () => {
    expect((await countRequest(db.sql, bucket('e', 1))).exceeded).toBe(false);
    expect((await countRequest(db.sql, bucket('e', 1))).exceeded).toBe(true);
    // As if the hour had passed.
    await db.sql`UPDATE rate_limits SET window_start = window_start - 3600 WHERE bucket = 'token:e'`;
    expect(await countRequest(db.sql, bucket('e', 1))).toMatchObject({ exceeded: false, remaining: 0 });
  });

  it('purges counters of windows long gone and keeps current ones', async () => {
    await countRequest(db.sql, bucket('f'));
    await db.sql`INSERT INTO rate_limits (bucket, window_start, count) VALUES ('token:old', 1000, 5)`;
    expect(await purgeRateLimits(db.sql, 3600)).toBeGreaterThanOrEqual(1);
    const rows = await db.sql<
      { bucket: string }[]
    >`SELECT bucket FROM rate_limits WHERE bucket IN ('token:old', 'token:f')`;
    expect(rows.map((r) => r.bucket)).toEqual(['token:f']);
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
      const count = createRequestCounter(counting);
      const results = await Promise.all(Array.from({ length: 40 }, () => count(bucket('g', 25))));
      expect(results.map((r) => r.remaining).sort((x, y) => y - x)).toEqual([
        ...Array.from({ length: 25 }, (_, i) => 24 - i),
        ...Array(15).fill(0),
      ]);
      expect(results.filter((r) => r.exceeded)).toHaveLength(15);
      expect(statements).toBeLessThan(40);
      expect(statements).toBeGreaterThanOrEqual(1);
      // Another process (here: a plain countRequest) shares the same count.
      expect((await countRequest(db.sql, bucket('g', 25))).exceeded).toBe(true);
      // Different buckets do not wait for each other.
      const [a, b] = await Promise.all([count(bucket('h', 1)), count(bucket('i', 1))]);
      expect([a.exceeded, b.exceeded]).toEqual([false, false]);
    } finally {
      await counting.end();
    }
  });

  it('passes a database error to every request of the batch, then keeps working', async () => {
    const count = createRequestCounter(db.sql);
    const bad = { ...bucket('j'), windowSeconds: 0 }; // division by zero in SQL
    const results = await Promise.allSettled([count(bad), count(bad), count(bad)]);
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect((await count(bucket('j'))).exceeded).toBe(false);
  });
});
