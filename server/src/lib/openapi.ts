import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { packagedFile } from '../config.js';

/** The API description the server validates requests against and serves: the package's copy, or the repository's openapi.yaml. */
export const openapiPath = packagedFile('openapi.yaml');

type Json = Record<string, unknown>;
export type OpenApiDocument = Json & { paths: Record<string, Record<string, Json>>; components?: Json };

export type Parameter = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Json };
export type Operation = {
  method: string;
  path: string;
  operationId: string;
  /** Abilities that each grant access (any one suffices); empty: no token needed. */
  abilities: string[];
  /** The device token scheme (webshop endpoints) rather than an API token. */
  deviceOnly: boolean;
  parameters: Parameter[];
  bodySchema: Json | undefined;
  raw: Json;
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const loaded = new Map<string, { document: OpenApiDocument; yamlText: string }>();

/**
 * The document, read and parsed once per process and file (8,000 lines of YAML take ~0.3 s):
 * every server a process composes, and every test of a worker, shares it. Treat it as read-only.
 */
export function loadOpenApi(file = openapiPath): { document: OpenApiDocument; yamlText: string } {
  let result = loaded.get(file);
  if (!result) {
    const yamlText = readFileSync(file, 'utf8');
    result = { document: parse(yamlText) as OpenApiDocument, yamlText };
    loaded.set(file, result);
  }
  return result;
}

/** Follows a local `$ref` (`#/components/...`) to the object it names. */
export function deref<T = Json>(document: OpenApiDocument, node: unknown): T {
  let current = node as Json;
  for (let i = 0; current && typeof current.$ref === 'string' && i < 10; i++) {
    const pointer = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    current = pointer.reduce<Json>((obj, key) => obj?.[key] as Json, document as Json);
  }
  return current as T;
}

export function listOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (Array.isArray(item.parameters) ? item.parameters : []).map((p) => deref<Parameter>(document, p));
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const own = ((op.parameters as unknown[]) ?? []).map((p) => deref<Parameter>(document, p));
      const parameters = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
      const body = op.requestBody ? deref<Json>(document, op.requestBody) : undefined;
      const content = body?.content as Record<string, Json> | undefined;
      const bodySchema = (content?.['application/json'] ?? content?.['application/x-www-form-urlencoded'])?.schema as
        | Json
        | undefined;
      const ability = op['x-ability'];
      const security = (op.security ?? document.security ?? []) as Record<string, string[]>[];
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: String(op.operationId),
        abilities: Array.isArray(ability) ? ability.map(String) : ability ? [String(ability)] : [],
        deviceOnly: security.length > 0 && security.every((s) => 'deviceToken' in s),
        parameters,
        bodySchema,
        raw: op,
      });
    }
  }
  return operations;
}
