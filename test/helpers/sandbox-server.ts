import path from 'node:path';
import { loadConfig, type Config } from '../../server/src/config.js';
import { createServer } from '../../server/src/server.js';
import { startWorker } from '../../server/src/worker.js';
import { createTestDatabase } from './db.js';
import type { LiveServer } from './live-server.js';
import { fetchToken } from './live-server.js';
import { type Json, TEST_SECRET_KEY } from './server.js';

export const DEMO_FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/demo.json');

/**
 * A live server in sandbox mode on a clone of the run's template, with the demo fixtures as its
 * fixture file (what a reset loads again) and the real default retry schedule unless overridden.
 */
export async function startSandboxServer(overrides: Partial<Config> = {}, { worker = true } = {}): Promise<LiveServer> {
  const db = await createTestDatabase();
  const config: Config = {
    ...loadConfig({}),
    secretKey: TEST_SECRET_KEY,
    port: 0,
    host: '127.0.0.1',
    rateLimitIp: 100_000,
    rateLimitToken: 100_000,
    webhookAllowInsecure: true,
    webhookTimeoutMs: 2000,
    sandbox: true,
    fixtures: DEMO_FIXTURES,
    ...overrides,
  };
  const server = await createServer({ sql: db.sql, config, log: () => {} });
  await server.start();
  const runner = worker
    ? await startWorker({ connectionString: db.url, sql: db.sql, config, pollInterval: 200 })
    : undefined;
  return {
    url: server.info.uri,
    server,
    db,
    config,
    worker: runner,
    close: async () => {
      await server.stop({ timeout: 2000 });
      await runner?.stop();
      await db.drop();
    },
  };
}

/** `fetch` of the server with a fixture client's token and JSON; the status, headers and parsed body. */
export function apiOf(live: LiveServer) {
  const tokens = new Map<string, string>();
  const token = async (clientId = 'acme-admin', fresh = false) => {
    const cached = fresh ? undefined : tokens.get(clientId);
    if (cached) return cached;
    const value = await fetchToken(live.url, clientId);
    tokens.set(clientId, value);
    return value;
  };
  const call = async (
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
    clientId = 'acme-admin',
  ) => {
    const res = await fetch(`${live.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${await token(clientId)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = { text };
    }
    return { status: res.status, headers: res.headers, body: json };
  };
  return { call, token, forget: () => tokens.clear() };
}
