import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { deref, loadOpenApi, type OpenApiDocument, type Parameter } from '../../server/src/lib/openapi.js';

/** ajv-formats is CommonJS: its module object is the plugin, which also carries itself as `default`. */
const addFormats = formatsModule.default;

/**
 * Checks a response against openapi.yaml: the status must be documented for the operation and
 * a JSON body must match its schema. Every test that goes through `inject` runs this, so the
 * server cannot drift from the document.
 */
export function createContractChecker(document: OpenApiDocument = loadOpenApi().document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi' });
  const cache = new Map<string, ReturnType<Ajv2020['compile']> | null>();
  return function check(
    method: string,
    routePath: string,
    status: number,
    contentType: string | undefined,
    body: string,
  ): string[] {
    const op = document.paths[routePath]?.[method.toLowerCase()] as Record<string, unknown> | undefined;
    if (!op) return [`${method} ${routePath} is not in openapi.yaml`];
    const responses = op.responses as Record<string, unknown>;
    const described = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!described) return [`${method} ${routePath} answered ${status}, which openapi.yaml does not document`];
    const key = `${method} ${routePath} ${status}`;
    if (!cache.has(key)) {
      const response = deref<Record<string, unknown>>(document, described);
      const content = response.content as Record<string, { schema?: unknown }> | undefined;
      const schema = content?.['application/json']?.schema;
      cache.set(
        key,
        schema
          ? ajv.compile(
              JSON.parse(JSON.stringify(schema), (k, v) =>
                k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi${v}` : v,
              ),
            )
          : null,
      );
    }
    const validate = cache.get(key);
    if (!validate) return [];
    if (!contentType?.includes('json'))
      return [`${key}: expected a JSON body, got ${contentType ?? 'no content type'}`];
    const data: unknown = JSON.parse(body);
    if (validate(data)) return [];
    return (validate.errors ?? []).map(
      (e) => `${key}: body${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  };
}

/**
 * Checks the headers of a delivery (lower-case names, as node:http gives them) against the header
 * parameters of its entry in the document's `webhooks` section, as a receiver that validates headers
 * would (issue 29: the `ping` delivery's `Loyalty-Event` was refused). Header values are text, so
 * integers are read as numbers.
 */
export function webhookHeaderProblems(
  webhook: string,
  headers: Record<string, string | string[] | undefined>,
  document: OpenApiDocument = loadOpenApi().document,
): string[] {
  const op = (document.webhooks as Record<string, { post?: { parameters?: unknown[] } }> | undefined)?.[webhook]?.post;
  if (!op) return [`${webhook} is not in the webhooks section of openapi.yaml`];
  const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi' });
  const problems: string[] = [];
  for (const node of op.parameters ?? []) {
    const parameter = deref<Parameter>(document, node);
    if (parameter.in !== 'header') continue;
    const value = headers[parameter.name.toLowerCase()];
    if (value === undefined) {
      if (parameter.required) problems.push(`${parameter.name}: missing`);
      continue;
    }
    const schema = JSON.parse(JSON.stringify(parameter.schema ?? {}), (k, v) =>
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi${v}` : v,
    );
    // Inside an object, so that Ajv can coerce the text of an integer header in place.
    const validate = ajv.compile({ type: 'object', properties: { value: schema } });
    if (!validate({ value }))
      problems.push(`${parameter.name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}
