import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  deref,
  listOperations,
  loadOpenApi,
  type OpenApiDocument,
  type Parameter,
} from '../../server/src/lib/openapi.js';

/**
 * Issue 29: what third-party tools read in openapi.yaml, checked without running them (they are
 * not dependencies of the project; the closing note gives their counts before and after).
 */

type Requirement = Record<string, string[]>;
type OAuthScheme = {
  type: string;
  flows?: { clientCredentials?: { tokenUrl?: string; scopes?: Record<string, string> } };
};

/** Spectral's `oas3-operation-security-defined`: each scope a requirement names is a declared scope of its scheme. */
function undeclaredScopes(document: OpenApiDocument): string[] {
  const schemes = (document.components?.securitySchemes ?? {}) as Record<string, OAuthScheme>;
  const problems: string[] = [];
  for (const op of listOperations(document)) {
    for (const requirement of (op.raw.security ?? document.security ?? []) as Requirement[]) {
      for (const [name, scopes] of Object.entries(requirement)) {
        const scheme = schemes[name];
        if (scheme?.type !== 'oauth2') continue;
        const declared = scheme.flows?.clientCredentials?.scopes ?? {};
        for (const scope of scopes)
          if (!declared[scope]) problems.push(`${op.method} ${op.path}: ${name} does not declare the scope ${scope}`);
      }
    }
  }
  return problems;
}

/** The type names a generator derives from an operation (@hey-api/openapi-ts: `<OperationId>Data`, `…Response`, …). */
const SUFFIXES = ['Data', 'Error', 'Errors', 'Response', 'Responses'];
function collidingSchemaNames(document: OpenApiDocument): string[] {
  const schemas = Object.keys((document.components?.schemas ?? {}) as Record<string, unknown>);
  const operationIds = [
    ...listOperations(document).map((op) => op.operationId),
    ...Object.values((document.webhooks ?? {}) as Record<string, Record<string, { operationId?: string }>>).flatMap(
      (item) => Object.values(item).map((op) => op.operationId ?? ''),
    ),
  ].filter(Boolean);
  const derived = new Set(
    operationIds.flatMap((id) => SUFFIXES.map((suffix) => `${id[0]!.toUpperCase()}${id.slice(1)}${suffix}`)),
  );
  return schemas.filter((name) => derived.has(name));
}

describe('openapi.yaml as generators, linters and receivers read it', () => {
  const { document } = loadOpenApi();

  it('abilities are the scopes of OAuth 2.0 client-credentials schemes whose token URL is /oauth/token', () => {
    const schemes = (document.components?.securitySchemes ?? {}) as Record<string, OAuthScheme>;
    for (const name of ['bearer', 'deviceToken']) {
      expect(schemes[name]?.type, name).toBe('oauth2');
      expect(schemes[name]?.flows?.clientCredentials?.tokenUrl, name).toBe('/oauth/token');
    }
    expect(undeclaredScopes(document)).toEqual([]);
    // Every ability an operation names has a description in its scheme.
    const declared = Object.values(schemes).flatMap((s) => Object.keys(s.flows?.clientCredentials?.scopes ?? {}));
    const abilities = new Set(listOperations(document).flatMap((op) => op.abilities));
    expect([...abilities].filter((a) => a !== 'sandbox.operator' && !declared.includes(a))).toEqual([]);
  });

  it('fails on a scope a scheme does not declare (the check can fail)', () => {
    const copy = structuredClone(document);
    (copy.paths['/tags']?.get as Record<string, unknown>).security = [{ bearer: ['tags.read'] }];
    expect(undeclaredScopes(copy)).toEqual(['GET /tags: bearer does not declare the scope tags.read']);
  });

  it('no schema is named like a type a generator derives from an operation', () => {
    expect(collidingSchemaNames(document)).toEqual([]);
    const copy = structuredClone(document);
    (copy.components!.schemas as Record<string, unknown>).ListMembersResponse = { type: 'object' };
    expect(collidingSchemaNames(copy)).toEqual(['ListMembersResponse']);
  });

  it("every delivery's Loyalty-Event header accepts the delivery's own type, ping included", () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ ...document, $id: 'openapi' });
    const refused: string[] = [];
    const webhooks = Object.entries((document.webhooks ?? {}) as Record<string, { post: Record<string, unknown> }>);
    for (const [name, { post }] of webhooks) {
      const header = ((post.parameters ?? []) as unknown[])
        .map((p) => deref<Parameter>(document, p))
        .find((p) => p.name === 'Loyalty-Event');
      const body = deref<{ schema?: unknown }>(
        document,
        (post.requestBody as { content: Record<string, unknown> }).content['application/json'],
      ).schema;
      const type = (deref<{ properties: { type: { const: string } } }>(document, body) ?? undefined)?.properties?.type
        ?.const;
      expect(type, name).toBe(name);
      const schema = JSON.parse(JSON.stringify(header?.schema ?? {}), (k, v) =>
        k === '$ref' && typeof v === 'string' ? `openapi${v}` : v,
      );
      if (!ajv.validate(schema, name)) refused.push(name);
    }
    expect(webhooks.length).toBeGreaterThan(5);
    expect(refused).toEqual([]);
  });
});
