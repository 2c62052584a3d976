import type { Server } from '@hapi/hapi';
import { loadConfig, type Config } from '../../server/src/config.js';
import { createServer } from '../../server/src/server.js';
import { startWorker, type WorkerRunner } from '../../server/src/worker.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { TEST_SECRET_KEY } from './server.js';

export type LiveServer = {
  url: string;
  server: Server;
  db: TestDatabase;
  config: Config;
  worker: WorkerRunner | undefined;
  close: () => Promise<void>;
};

/**
 * The real reference server listening on 127.0.0.1 (a free port) with its graphile-worker
 * runner, on a database cloned from the run's template: what SDK and CLI end-to-end tests
 * talk to over real HTTP.
 */
export function startLiveServer(overrides: Partial<Config> = {}, { worker = true } = {}): Promise<LiveServer> {
  return startServerWith(
    { webhookRetryDelays: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2], ...overrides, fixtures: 'none' },
    { worker },
  );
}

/**
 * A server (and a worker, unless `worker: false`) on 127.0.0.1 over a new database cloned from the
 * run's template, with the tests' settings (a known secret key, limits out of the way, local webhook
 * URLs allowed, a 2 s acknowledgement time) under `config`.
 */
export async function startServerWith(config: Partial<Config>, { worker = true } = {}): Promise<LiveServer> {
  const db = await createTestDatabase();
  const full: Config = {
    ...loadConfig({}),
    secretKey: TEST_SECRET_KEY,
    port: 0,
    host: '127.0.0.1',
    rateLimitIp: 100_000,
    rateLimitToken: 100_000,
    webhookAllowInsecure: true,
    webhookTimeoutMs: 2000,
    ...config,
  };
  const server = await createServer({ sql: db.sql, config: full, log: () => {} });
  await server.start();
  const runner = worker
    ? await startWorker({ connectionString: db.url, sql: db.sql, config: full, pollInterval: 200 })
    : undefined;
  return {
    url: server.info.uri,
    server,
    db,
    config: full,
    worker: runner,
    close: async () => {
      await server.stop({ timeout: 2000 });
      await runner?.stop();
      await db.drop();
    },
  };
}

/** A token for a fixture client over real HTTP (secret `<client_id>-secret`). */
export async function fetchToken(url: string, clientId: string, scope?: string[]): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: `${clientId}-secret`,
      ...(scope && { scope: scope.join(' ') }),
    }),
  });
  if (!res.ok) throw new Error(`token for ${clientId}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}
