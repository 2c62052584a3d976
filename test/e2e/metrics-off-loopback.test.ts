import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { onTestDatabase, startServerProcess, type ServerProcess } from '#test-helpers/server-process.js';

/**
 * `HOST=0.0.0.0 npm start` without LOYALTY_METRICS_TOKEN, as containers and CI run it: the server
 * starts (HOST is only the bind address), warns once on stderr that /metrics is off, answers 401
 * naming LOYALTY_METRICS_TOKEN there, and serves everything else. One API process and a cluster.
 */
let db: TestDatabase;
const started: ServerProcess[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
}, 180_000);
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await db?.drop();
});

const warningLines = (stderr: string) => stderr.split('\n').filter((line) => line.includes('/metrics'));

for (const processes of ['1', '2'])
  it(`with LOYALTY_API_PROCESSES=${processes} starts on 0.0.0.0, warns once, and /metrics answers 401 naming the token`, async () => {
    const server = await startServerProcess({
      ...onTestDatabase(db.url),
      HOST: '0.0.0.0',
      LOYALTY_METRICS_TOKEN: '', // empty: unset
      LOYALTY_WORKER: 'off',
      LOYALTY_API_PROCESSES: processes,
    });
    started.push(server);
    const base = `http://127.0.0.1:${new URL(server.url).port}`;
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(401);
    const body = (await metrics.json()) as { message: string; error: string };
    expect(body).toMatchObject({ error: 'unauthenticated', message: expect.stringMatching(/LOYALTY_METRICS_TOKEN/) });
    expect((await fetch(`${base}/health`)).status).toBe(200);
    await server.stop();
    const lines = warningLines(server.stderr());
    expect(lines, server.stderr()).toHaveLength(1);
    expect(lines[0]).toMatch(/^loyalty: warning: GET \/metrics is off .*until LOYALTY_METRICS_TOKEN is set/);
  }, 60_000);

it('on loopback without the token, and with the token on 0.0.0.0, logs no such warning', async () => {
  const env = onTestDatabase(db.url);
  for (const extra of [
    { HOST: '127.0.0.1', LOYALTY_METRICS_TOKEN: '' },
    { HOST: '0.0.0.0', LOYALTY_METRICS_TOKEN: 'metrics-token-0123456789abcdef' },
  ]) {
    const server = await startServerProcess({ ...env, ...extra, LOYALTY_WORKER: 'off' });
    started.push(server);
    const base = `http://127.0.0.1:${new URL(server.url).port}`;
    expect((await fetch(`${base}/metrics`)).status, extra.HOST).toBe(extra.LOYALTY_METRICS_TOKEN ? 401 : 200);
    await server.stop();
    expect(warningLines(server.stderr()), server.stderr()).toEqual([]);
  }
}, 60_000);
