import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { TEST_SECRET_KEY } from '#test-helpers/server.js';
import { loadConfig } from '../config.js';
import type { WorkerHealth } from '../context.js';
import { migrationFiles } from '../db/migrate.js';
import { createServer } from '../server.js';
import { startWorker } from '../worker.js';

/** Issue 14 item 6: readiness names the database, the migration level and this process's worker. */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function ready(workerHealth?: () => WorkerHealth) {
  const config = { ...loadConfig({ LOYALTY_SECRET_KEY: TEST_SECRET_KEY }), fixtures: 'none' };
  const server = await createServer({ sql: db.sql, config, log: () => {}, workerHealth });
  await server.initialize();
  const res = await server.inject({ method: 'GET', url: '/health/ready' });
  return { status: res.statusCode, body: JSON.parse(res.payload), retryAfter: res.headers['retry-after'] };
}

describe('GET /health/ready', () => {
  it('is 200 with database and migrations ok, and the worker ok when this process runs one', async () => {
    expect(await ready()).toMatchObject({
      status: 200,
      body: { status: 'ok', checks: { database: 'ok', migrations: 'ok' } },
    });
    const withWorker = await ready(() => ({ ok: true, lastBeatAt: Date.now() }));
    expect(withWorker.body).toEqual({
      status: 'ok',
      checks: { database: 'ok', migrations: 'ok', clock: 'ok', worker: 'ok' },
    });
  });

  it('is 503 naming the worker when its runners stopped or its heartbeat is old', async () => {
    const res = await ready(() => ({ ok: false, lastBeatAt: Date.now() - 60_000 }));
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('5');
    expect(res.body).toEqual({
      message: 'Not ready: the worker of this process is not running.',
      error: 'not_ready',
      status: 'unavailable',
      checks: { database: 'ok', migrations: 'ok', clock: 'ok', worker: 'down' },
    });
  });

  it('is 503 naming the migrations when the database lacks the last one this version knows', async () => {
    const last = (await migrationFiles()).at(-1)!;
    await db.sql`DELETE FROM schema_migrations WHERE name = ${last}`;
    try {
      const res = await ready();
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        message: 'Not ready: the database lacks migrations of this version.',
        checks: { database: 'ok', migrations: 'behind' },
      });
    } finally {
      await db.sql`INSERT INTO schema_migrations (name) VALUES (${last})`;
    }
  });

  it("reports a real worker's heartbeat: ok once it has beaten, down after it stopped", async () => {
    const config = { ...loadConfig({ LOYALTY_SECRET_KEY: TEST_SECRET_KEY }), fixtures: 'none' };
    const runner = await startWorker({ connectionString: db.url, sql: db.sql, config, pollInterval: 100 });
    try {
      for (const deadline = Date.now() + 5000; !runner.health().ok && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 20));
      expect((await ready(runner.health)).body.checks.worker).toBe('ok');
    } finally {
      await runner.stop();
    }
    expect(runner.health().ok).toBe(false);
    expect((await ready(runner.health)).status).toBe(503);
  });
});
