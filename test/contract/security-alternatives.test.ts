import type { Server } from '@hapi/hapi';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import type { Sql } from '../../server/src/db/pool.js';
import { listOperations, loadOpenApi, type OpenApiDocument } from '../../server/src/lib/openapi.js';
import { createServer } from '../../server/src/server.js';

/**
 * Issue 25: in OpenAPI, the scopes of ONE security requirement are all required, and the
 * requirements of an operation's `security` are alternatives. The server accepts any one of an
 * operation's abilities (hapi's route scope), so the document must list each ability as a
 * requirement of its own: `security: [{bearer: [a]}, {bearer: [b]}]`. For every operation the
 * abilities of those alternatives must be exactly the server's route scope (sandbox mode on, so
 * the sandbox operations are routed too).
 */

type Requirement = Record<string, string[]>;
type RouteScopes = Map<string, string[] | false>;

/** The problems of one document against the server's route scopes (`false`: no auth on the route). */
function securityProblems(document: OpenApiDocument, routeScopes: RouteScopes): string[] {
  const problems: string[] = [];
  for (const op of listOperations(document)) {
    const name = `${op.operationId} (${op.method} ${op.path})`;
    const requirements = ((op.raw.security ?? document.security ?? []) as Requirement[]).filter(
      (r) => Object.keys(r).length > 0,
    );
    const route = routeScopes.get(`${op.method} ${op.path}`);
    if (route === undefined) {
      problems.push(`${name}: no route`);
      continue;
    }
    if (!requirements.length) {
      if (route !== false) problems.push(`${name}: the document needs no token but the route authenticates`);
      continue;
    }
    const alternatives: string[] = [];
    for (const requirement of requirements) {
      const schemes = Object.entries(requirement);
      if (schemes.length !== 1)
        problems.push(`${name}: a requirement of several schemes ${JSON.stringify(requirement)}`);
      for (const [scheme, scopes] of schemes) {
        if (scopes.length > 1)
          problems.push(
            `${name}: ${scheme} requires ALL of [${scopes.join(', ')}] in one requirement; the server accepts any one (list each as its own requirement)`,
          );
        alternatives.push(...scopes);
      }
    }
    if (route === false) {
      problems.push(`${name}: the document needs a token but the route has no auth`);
      continue;
    }
    const documented = [...new Set(alternatives)].sort();
    const served = [...new Set(route)].sort();
    if (JSON.stringify(documented) !== JSON.stringify(served))
      problems.push(`${name}: the document's alternatives [${documented}] but the route accepts [${served}]`);
  }
  return problems;
}

let server: Server;
let sql: Sql;
let routeScopes: RouteScopes;
beforeAll(async () => {
  // Composing the server runs no query; postgres.js connects lazily.
  sql = postgres('postgres://nobody@127.0.0.1:1/none', { max: 1 }) as unknown as Sql;
  server = await createServer({ sql, config: { ...loadConfig({}), sandbox: true }, log: () => {} });
  routeScopes = new Map(
    server.table().map((route) => {
      const auth = route.settings.auth as false | { access?: { scope?: { selection?: string[] } }[] } | undefined;
      return [
        `${route.method.toUpperCase()} ${route.path}`,
        auth ? (auth.access?.flatMap((a) => a.scope?.selection ?? []) ?? []) : false,
      ];
    }),
  );
});
afterAll(async () => {
  await server?.stop();
  await sql?.end({ timeout: 0 });
});

describe('security requirements of openapi.yaml are the alternatives the server accepts', () => {
  it('for every operation, one requirement per ability, and their abilities are the route scope', () => {
    const { document } = loadOpenApi();
    expect(securityProblems(document, routeScopes)).toEqual([]);
    // Every operation was looked at, the sandbox ones too.
    expect(listOperations(document).filter((op) => op.path.startsWith('/sandbox/')).length).toBeGreaterThanOrEqual(5);
  });

  it('fails on a requirement that lists several abilities together (the check can fail)', () => {
    const { document } = loadOpenApi();
    const copy = structuredClone(document);
    const tags = copy.paths['/tags']?.get as Record<string, unknown>;
    tags.security = [{ bearer: ['tags.get', 'tags.store'] }];
    expect(securityProblems(copy, routeScopes).join('\n')).toMatch(/requires ALL of \[tags\.get, tags\.store\]/);
  });
});
