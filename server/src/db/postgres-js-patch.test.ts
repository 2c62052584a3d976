import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { unrepairedBuilds } from '../../../scripts/server-bundled-postgres.mjs';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { createPool } from './pool.js';

/**
 * postgres.js 3.4.9 throws from a setImmediate when a query is written to a connection whose
 * socket has closed (porsager/postgres#1066, #1154, #1208; the fixes #1168, #1176 are unreleased):
 * an uncaught TypeError that ended the whole server when its PostgreSQL was killed mid-transaction
 * (the ROLLBACK went to the dead connection). patches/postgres+3.4.9.patch fails that query with
 * CONNECTION_CLOSED instead. patch-package applies it here at install; @loyalty/server's tarball
 * carries the repaired copy as a bundled dependency (scripts/server-bundled-postgres.mjs, which
 * refuses to pack a copy without it; test/e2e/packed-install.test.ts kills PostgreSQL under the
 * installed server). Without the repair this file's test run dies with "Cannot read properties of
 * null (reading 'write')".
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

/** The postgres.js this server resolves: what the tests above ran and what `npm pack` bundles. */
const resolved = (() => {
  const entry = createRequire(import.meta.url).resolve('postgres');
  return entry.slice(0, entry.lastIndexOf(`${path.sep}postgres${path.sep}`) + '/postgres'.length);
})();

it('the postgres.js the server resolves carries the repair in all three builds; the pack check finds a build without it', async () => {
  expect(unrepairedBuilds(resolved)).toEqual([]);
  const copy = await mkdtemp(path.join(os.tmpdir(), 'loyalty-postgres-js-'));
  try {
    await cp(resolved, copy, { recursive: true });
    const file = path.join(copy, 'cjs', 'src', 'connection.js');
    const source = await readFile(file, 'utf8');
    const unguarded = source.replace(/(function nextWrite\(fn\) \{)\s*if \(!socket\)/, '$1\n    if (false)');
    expect(unguarded).not.toBe(source);
    await writeFile(file, unguarded);
    expect(unrepairedBuilds(copy)).toEqual(['cjs/src/connection.js']);
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
});
