import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { createPool } from './pool.js';

/**
 * postgres.js 3.4.9 throws from a setImmediate when a query is written to a connection whose
 * socket has closed (porsager/postgres#1154, #1208): an uncaught TypeError that ended the whole
 * server when its PostgreSQL was killed. patches/postgres+3.4.9.patch (applied by patch-package
 * at install) fails that query with CONNECTION_CLOSED instead. Without the patch this file's
 * test run dies with "Cannot read properties of null (reading 'write')".
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

it('queries on a reserved connection whose backend was terminated fail with CONNECTION_CLOSED, and the pool serves the next one', async () => {
  const sql = createPool(db.url, { max: 2 });
  try {
    const reserved = await sql.reserve();
    const [row] = await reserved<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    const pid = row!.pid;
    await db.sql`SELECT pg_terminate_backend(${pid})`;
    await new Promise((r) => setTimeout(r, 200)); // the close has arrived
    const outcomes: unknown[] = [];
    for (let i = 0; i < 3; i++)
      outcomes.push(
        await reserved`SELECT 1`.then(
          () => 'ok',
          (e: { code?: string }) => e.code,
        ),
      );
    expect(outcomes).toEqual(['CONNECTION_CLOSED', 'CONNECTION_CLOSED', 'CONNECTION_CLOSED']);
    // (Not released: a released dead connection goes back to the pool unrepaired, porsager/postgres#1208; only migrations reserve.)
    expect(await sql`SELECT 2 AS two`).toEqual([{ two: 2 }]);
  } finally {
    await sql.end({ timeout: 1 });
  }
});
