import type { Server } from '@hapi/hapi';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import type { Sql } from '../../server/src/db/pool.js';
import { listOperations, loadOpenApi, type Operation } from '../../server/src/lib/openapi.js';
import { routes } from '../../server/src/routes/index.js';
import { createServer } from '../../server/src/server.js';

/**
 * Operations of openapi.yaml that have no route yet, by operationId. Whoever adds a route
 * removes its operation here (the test fails while a pending operation has a route, or an
 * operation has neither a route nor an entry here).
 */
const PENDING: string[] = [
  // (none: every operation has a route)
];

const { document } = loadOpenApi();
const operations = listOperations(document);
const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const routeKeys = new Set(routes.map((r) => key(r.method, r.path)));
const needsToken = (op: Operation) =>
  ((op.raw.security as unknown[] | undefined) ?? (document.security as unknown[] | undefined) ?? []).length > 0;
const documented = (op: Operation) => Object.keys(op.raw.responses as Record<string, unknown>);

let server: Server;
let sql: Sql;
beforeAll(async () => {
  // Composing the server runs no query; postgres.js connects lazily.
  sql = postgres('postgres://nobody@127.0.0.1:1/none', { max: 1 }) as unknown as Sql;
  server = await createServer({ sql, config: loadConfig({}), log: () => {} });
});
afterAll(async () => {
  await server?.stop();
  await sql?.end({ timeout: 0 });
});

describe('routes (server/src/routes/index.ts) and openapi.yaml', () => {
  it('every route is an operation of openapi.yaml', () => {
    const unknown = routes
      .filter((r) => !operations.some((op) => op.method === r.method && op.path === r.path))
      .map((r) => key(r.method, r.path));
    expect(unknown).toEqual([]);
  });

  it('every operation has a route, except the explicit pending list', () => {
    const missing = operations.filter(
      (op) => !routeKeys.has(key(op.method, op.path)) && !PENDING.includes(op.operationId),
    );
    expect(
      missing.map((op) => `${op.operationId} (${key(op.method, op.path)})`),
      'operations without a route: add the route, or list the operation in PENDING',
    ).toEqual([]);
    const done = operations.filter((op) => PENDING.includes(op.operationId) && routeKeys.has(key(op.method, op.path)));
    expect(
      done.map((op) => op.operationId),
      'these have a route now: remove them from PENDING',
    ).toEqual([]);
    const stale = PENDING.filter((id) => !operations.some((op) => op.operationId === id));
    expect(stale, 'PENDING names operations that openapi.yaml does not have').toEqual([]);
    const pending = operations.filter((op) => PENDING.includes(op.operationId));
    if (pending.length) {
      console.info(
        `routes-match-openapi: ${pending.length} of ${operations.length} operations pending:\n${pending.map((op) => `  ${op.operationId.padEnd(28)} ${key(op.method, op.path)}`).join('\n')}`,
      );
    }
  });

  it('each route requires exactly the ability of its operation (x-ability = security scopes), or no token', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const route of server.table()) {
      const op = operations.find((o) => o.method === route.method.toUpperCase() && o.path === route.path);
      if (!op) continue;
      const name = `${op.operationId} (${key(op.method, op.path)})`;
      const auth = route.settings.auth as false | { access?: { scope?: { selection?: string[] } }[] } | undefined;
      const scopes = [
        ...new Set(
          ((op.raw.security as Record<string, string[]>[] | undefined) ?? []).flatMap((s) => Object.values(s).flat()),
        ),
      ].sort();
      if (JSON.stringify([...op.abilities].sort()) !== JSON.stringify(scopes))
        problems.push(`${name}: x-ability ${op.abilities} but security scopes ${scopes}`);
      if (!needsToken(op)) {
        if (auth) problems.push(`${name}: takes no token in openapi.yaml but the route authenticates`);
        continue;
      }
      const selection = [...(auth ? (auth.access?.[0]?.scope?.selection ?? []) : [])].sort();
      if (!auth) problems.push(`${name}: needs a token in openapi.yaml but the route has no auth`);
      else if (JSON.stringify(selection) !== JSON.stringify([...op.abilities].sort()))
        problems.push(`${name}: route scope ${selection} but x-ability ${op.abilities}`);
      if (selection.length) checked++;
    }
    expect(problems).toEqual([]);
    expect(checked).toBe(
      routes.filter((r) => needsToken(operations.find((o) => o.method === r.method && o.path === r.path)!)).length,
    );
    expect(checked).toBeGreaterThan(10);
  });
});

describe('openapi.yaml documents what the rate-limit and idempotency plugins answer', () => {
  it('every operation but the health checks and /metrics (not rate limited) documents 429; every token operation 401 and 403', () => {
    const problems: string[] = [];
    for (const op of operations) {
      const codes = documented(op);
      if (!['/health', '/health/ready', '/metrics'].includes(op.path) && !codes.includes('429'))
        problems.push(`${op.operationId}: no 429`);
      if (needsToken(op))
        for (const code of ['401', '403']) if (!codes.includes(code)) problems.push(`${op.operationId}: no ${code}`);
    }
    expect(problems).toEqual([]);
  });

  it('every POST/PUT/PATCH with a token takes Idempotency-Key and documents 400, 409 and 422', () => {
    const problems: string[] = [];
    for (const op of operations.filter((o) => ['POST', 'PUT', 'PATCH'].includes(o.method) && needsToken(o))) {
      if (!op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'))
        problems.push(`${op.operationId}: no Idempotency-Key parameter`);
      for (const code of ['400', '409', '422'])
        if (!documented(op).includes(code)) problems.push(`${op.operationId}: no ${code}`);
    }
    expect(problems).toEqual([]);
  });
});
