import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../server/src/config.js';
import { createServer } from '../../server/src/server.js';
import { createContractChecker } from './contract.js';
import { createTestDatabase, type TestDatabase } from './db.js';

const checkContract = createContractChecker();

export type TestServer = {
  server: Server;
  db: TestDatabase;
  config: Config;
  /** `server.inject`, plus the contract check of the response against openapi.yaml. */
  inject: (options: ServerInjectOptions) => Promise<ServerInjectResponse>;
  /** A bearer token of a fixture client (secret `<client_id>-secret`), optionally with fewer abilities. */
  tokenFor: (clientId: string, scope?: string[]) => Promise<string>;
  /** `{ authorization: 'Bearer …' }` for a fixture client. */
  auth: (clientId: string, scope?: string[]) => Promise<{ authorization: string }>;
  close: () => Promise<void>;
};

export async function createTestServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  const db = await createTestDatabase();
  // Tests issue many tokens from one address: the per-IP limit is raised unless a test sets it.
  const config: Config = { ...loadConfig({}), rateLimitIp: 100_000, rateLimitToken: 100_000, webhookAllowInsecure: true, ...overrides, fixtures: 'none' };
  const server = await createServer({ sql: db.sql, config, log: () => {} });
  await server.initialize();
  const tokens = new Map<string, string>();
  const inject = async (options: ServerInjectOptions) => {
    const res = await server.inject(options);
    const route = res.request.route;
    if ((route.settings.plugins as { loyalty?: unknown }).loyalty) {
      const problems = checkContract(route.method, route.path, res.statusCode, String(res.headers['content-type'] ?? ''), res.payload);
      expect(problems, `response of ${route.method.toUpperCase()} ${route.path} must match openapi.yaml`).toEqual([]);
    }
    return res;
  };
  const tokenFor = async (clientId: string, scope?: string[]) => {
    const key = `${clientId} ${scope?.join(' ') ?? '*'}`;
    const cached = tokens.get(key);
    if (cached) return cached;
    const res = await server.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: `${clientId}-secret`, ...(scope && { scope: scope.join(' ') }) },
    });
    if (res.statusCode !== 200) throw new Error(`token for ${clientId}: ${res.statusCode} ${res.payload}`);
    const token = (JSON.parse(res.payload) as { access_token: string }).access_token;
    tokens.set(key, token);
    return token;
  };
  return {
    server,
    db,
    config,
    inject,
    tokenFor,
    auth: async (clientId, scope) => ({ authorization: `Bearer ${await tokenFor(clientId, scope)}` }),
    close: async () => {
      await server.stop();
      await db.drop();
    },
  };
}
