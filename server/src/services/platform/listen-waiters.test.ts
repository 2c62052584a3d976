import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { createPool } from '../../db/pool.js';
import { listenWaiters } from './listen-waiters.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

it("a process's first poll, opened before its LISTEN is active, reads again once it is: no notification is lost", async () => {
  // A fresh pool: its LISTEN connection is being set up while the first poll reads. A notification
  // sent in between reaches nobody, so that poll must not simply sleep out its wait.
  const sql = createPool(db.url, { max: 2 });
  try {
    const poll = listenWaiters(sql, 'listen_waiters_test', 5).open('subject', 'key');
    const woken = poll.next();
    const started = performance.now();
    await woken.wait(10_000);
    expect(performance.now() - started).toBeLessThan(5_000);
    poll.close();

    // Once LISTEN is active, a poll sleeps until it is notified.
    const later = listenWaiters(sql, 'listen_waiters_test', 5).open('subject', 'key');
    const waiting = later.next();
    const slept = performance.now();
    await waiting.wait(300);
    expect(performance.now() - slept).toBeGreaterThanOrEqual(250);
    later.close();
  } finally {
    await sql.end({ timeout: 1 });
  }
});
