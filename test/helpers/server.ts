import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';
import { afterAll, beforeAll, expect } from 'vitest';
import { loadConfig, type Config } from '../../server/src/config.js';
import type { Operation } from '../../server/src/lib/openapi.js';
import { createServer } from '../../server/src/server.js';
import { createContractChecker } from './contract.js';
import { createTestDatabase, type TestDatabase } from './db.js';

const checkContract = createContractChecker();

/** The clients of the demo fixtures every test database is seeded with (test/helpers/global-setup.ts), in file order. */
const FIXTURE_CLIENTS = (
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../fixtures/demo.json'), 'utf8')) as {
    clients: { client_id: string; abilities: string[] }[];
  }
).clients;

/** The key of webhook secrets at rest in tests (the server requires one; the embedded default generates its own). */
export const TEST_SECRET_KEY = 'test-only key of webhook secrets at rest';

export type TestServer = {
  server: Server;
  db: TestDatabase;
  config: Config;
  /** `server.inject`, plus the contract check of the response against openapi.yaml. */
  inject: (options: ServerInjectOptions) => Promise<ServerInjectResponse>;
  /** A bearer token of a fixture client (secret `<client_id>-secret`), optionally with fewer abilities. */
  tokenFor: (clientId: string, scope?: string[]) => Promise<string>;
  /** Like tokenFor, but a new token every call (a sandbox reset revokes the cached one); throws unless 200. */
  newToken: (clientId: string, scope?: string[]) => Promise<string>;
  /** `{ authorization: 'Bearer …' }` for a fixture client. */
  auth: (clientId: string, scope?: string[]) => Promise<{ authorization: string }>;
  /**
   * Headers that pass an operation's `security` in openapi.yaml: its first alternative that can be
   * met, by the first fixture client holding every ability a `bearer` or `deviceToken` alternative
   * names, or by the operator credential (`sandboxOperator`) when the server has one. `{}` for an
   * operation without security; throws when no alternative can be met. `fresh`: a new token rather
   * than the cached one (which `POST /sandbox/reset` of the client's organization revokes).
   */
  authFor: (op: Operation, fresh?: boolean) => Promise<Record<string, string>>;
  close: () => Promise<void>;
};

export async function createTestServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  const db = await createTestDatabase();
  // Tests issue many tokens from one address: the per-IP limit is raised unless a test sets it.
  const config: Config = {
    ...loadConfig({}),
    secretKey: TEST_SECRET_KEY,
    rateLimitIp: 100_000,
    rateLimitToken: 100_000,
    webhookAllowInsecure: true,
    ...overrides,
    fixtures: 'none',
  };
  const server = await createServer({ sql: db.sql, config, log: () => {} });
  await server.initialize();
  const tokens = new Map<string, string>();
  const inject = async (options: ServerInjectOptions) => {
    const res = await server.inject(options);
    const route = res.request.route;
    if ((route.settings.plugins as { loyalty?: unknown }).loyalty) {
      const problems = checkContract(
        route.method,
        route.path,
        res.statusCode,
        String(res.headers['content-type'] ?? ''),
        res.payload,
      );
      expect(problems, `response of ${route.method.toUpperCase()} ${route.path} must match openapi.yaml`).toEqual([]);
    }
    return res;
  };
  const issue = async (clientId: string, scope?: string[]) => {
    const res = await server.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: {
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: `${clientId}-secret`,
        ...(scope && { scope: scope.join(' ') }),
      },
    });
    if (res.statusCode !== 200) throw new Error(`token for ${clientId}: ${res.statusCode} ${res.payload}`);
    return (JSON.parse(res.payload) as { access_token: string }).access_token;
  };
  const tokenFor = async (clientId: string, scope?: string[]) => {
    const key = `${clientId} ${scope?.join(' ') ?? '*'}`;
    const token = tokens.get(key) ?? (await issue(clientId, scope));
    tokens.set(key, token);
    return token;
  };
  return {
    server,
    db,
    config,
    inject,
    tokenFor,
    newToken: issue,
    auth: async (clientId, scope) => ({ authorization: `Bearer ${await tokenFor(clientId, scope)}` }),
    authFor: async (op, fresh = false): Promise<Record<string, string>> => {
      const alternatives = (op.raw.security ?? []) as Record<string, string[]>[];
      if (alternatives.length === 0 || alternatives.some((a) => Object.keys(a).length === 0)) return {};
      for (const alternative of alternatives) {
        const entries = Object.entries(alternative);
        if (entries.length !== 1) continue; // several schemes at once: none of the document's operations
        const [[scheme, abilities]] = entries as [[string, string[]]];
        if (scheme === 'sandboxOperator') {
          if (config.sandboxOperatorToken) return { authorization: `Bearer ${config.sandboxOperatorToken}` };
          continue;
        }
        const client = FIXTURE_CLIENTS.find((c) => abilities.every((a) => c.abilities.includes(a)));
        if (client)
          return { authorization: `Bearer ${await (fresh ? issue(client.client_id) : tokenFor(client.client_id))}` };
      }
      throw new Error(`no fixture client or credential meets the security of ${op.method} ${op.path}`);
    },
    close: async () => {
      await server.stop();
      await db.drop();
    },
  };
}

export type Auth = { authorization: string };
export type Json = Record<string, any>;

/** A test server with the headers of the clients most route tests act as. */
export async function createApiTestServer(): Promise<{ t: TestServer; admin: Auth; readonly: Auth; globex: Auth }> {
  const t = await createTestServer();
  const [admin, readonly, globex] = await Promise.all([
    t.auth('acme-admin'),
    t.auth('acme-readonly'),
    t.auth('globex-admin'),
  ]);
  return { t, admin, readonly, globex };
}

/**
 * `call(method, url, payload?, headers?)` on the server `server()` answers, as `defaults()` unless
 * headers are given: status and the parsed JSON body (null when empty).
 * (Getters, because a file's server starts in its beforeAll.)
 */
export const injector =
  (server: () => TestServer, defaults: () => Auth) =>
  async (method: string, url: string, payload?: unknown, headers: Auth = defaults()) => {
    const res = await server().inject({
      method,
      url,
      headers,
      ...(payload !== undefined && { payload: payload as object }),
    });
    return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
  };

/**
 * A file's API test server: started before its tests (what `createApiTestServer` answers handed to
 * `ready`), closed after them; answers the file's `call`, acting as admin unless told otherwise.
 */
export function useApiTestServer(ready: (api: { t: TestServer; admin: Auth; readonly: Auth; globex: Auth }) => void) {
  let t: TestServer | undefined;
  let admin: Auth | undefined;
  beforeAll(async () => {
    const api = await createApiTestServer();
    ({ t, admin } = api);
    ready(api);
  });
  afterAll(() => t?.close());
  return injector(
    () => t as TestServer,
    () => admin as Auth,
  );
}
