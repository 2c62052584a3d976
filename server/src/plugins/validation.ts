import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import Boom from '@hapi/boom';
import { invalid, type DomainError } from '../services/platform/errors.js';
import type { OpenApiDocument, Operation } from '../lib/openapi.js';
import { textFaults } from '../lib/input-rules.js';

/** ajv-formats is CommonJS: its module object is the plugin, which also carries itself as `default`. */
const addFormats = formatsModule.default;

/**
 * Request validation straight from openapi.yaml: the document's JSON Schemas (OpenAPI 3.1 is
 * JSON Schema 2020-12) compiled with Ajv, so the server cannot accept what the document forbids.
 * Query and path values arrive as strings and are coerced to the declared types.
 */
export function createValidators(document: OpenApiDocument): ValidatorsFor {
  let cached = compiled.get(document);
  if (!cached) {
    cached = validatorsOf(document);
    compiled.set(document, cached);
  }
  return cached;
}

type Validators = { params?: ValidateFunction; query?: ValidateFunction; payload?: ValidateFunction };
type ValidatorsFor = (op: Operation) => Validators;

/** Compiled once per document and operation: every server a process composes shares them. */
const compiled = new WeakMap<OpenApiDocument, ValidatorsFor>();

function validatorsOf(document: OpenApiDocument): ValidatorsFor {
  const byOperation = new Map<string, Validators>();
  const make = (coerce: boolean) => {
    const ajv = new Ajv2020({
      strict: false,
      allErrors: true,
      coerceTypes: coerce ? 'array' : false,
      useDefaults: true,
      validateFormats: true,
    });
    addFormats(ajv);
    ajv.addSchema({ ...document, $id: 'openapi' });
    return ajv;
  };
  const bodies = make(false);
  const strings = make(true);
  const compileParams = (op: Operation, where: 'path' | 'query') => {
    const params = op.parameters.filter((p) => p.in === where);
    if (!params.length) return undefined;
    return strings.compile({
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, rewriteRefs(p.schema ?? {})])),
      required: params.filter((p) => p.required).map((p) => p.name),
    });
  };
  return function validatorsFor(op: Operation) {
    const key = `${op.method} ${op.path}`;
    let v = byOperation.get(key);
    if (!v) {
      v = {
        params: compileParams(op, 'path'),
        query: compileParams(op, 'query'),
        payload: op.bodySchema ? bodies.compile(rewriteRefs(op.bodySchema)) : undefined,
      };
      byOperation.set(key, v);
    }
    return v;
  };
}

/** `#/components/...` inside a standalone schema must point into the added `openapi` document. */
function rewriteRefs(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema), (key, value) =>
    key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `openapi${value}` : value,
  );
}

export function fieldErrors(errors: ErrorObject[] | null | undefined, prefix = ''): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const e of errors ?? []) {
    // oneOf/anyOf report every branch; their own summary line is noise next to the branch errors.
    if (e.keyword === 'if') continue;
    let path = e.instancePath.slice(1).replace(/\//g, '.');
    if (e.keyword === 'required')
      path = [path, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
    if (e.keyword === 'additionalProperties')
      path = [path, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
    const field = [prefix, path].filter(Boolean).join('.') || prefix || 'body';
    const message = describe(field, e);
    let messages = fields[field];
    if (!messages) {
      messages = [];
      fields[field] = messages;
    }
    if (!messages.includes(message)) messages.push(message);
  }
  return fields;
}

function describe(field: string, e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `The ${field} field is required.`;
    case 'type':
      return `The ${field} field must be of type ${String(p.type).replace(',', ' or ')}.`;
    case 'format':
      return `The ${field} field must be a valid ${String(p.format)}.`;
    case 'maxLength':
      return `The ${field} field must not be greater than ${String(p.limit)} characters.`;
    case 'minLength':
      return `The ${field} field must be at least ${String(p.limit)} characters.`;
    case 'maxItems':
      return `The ${field} field must not have more than ${String(p.limit)} items.`;
    case 'minItems':
      return `The ${field} field must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}.`;
    case 'minimum':
      return `The ${field} field must be at least ${String(p.limit)}.`;
    case 'maximum':
      return `The ${field} field must not be greater than ${String(p.limit)}.`;
    case 'enum':
      return `The selected ${field} is invalid; allowed: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'const':
      return `The ${field} field must be ${JSON.stringify(p.allowedValue)}.`;
    case 'pattern':
      return `The ${field} field format is invalid.`;
    case 'additionalProperties':
      return `The ${field} field is not allowed.`;
    case 'oneOf':
    case 'anyOf':
      return `The ${field} field does not match any allowed form.`;
    case 'not':
      return `The ${field} field is not allowed here.`;
    default:
      return `The ${field} field is invalid (${e.message ?? e.keyword}).`;
  }
}

/**
 * A hapi `validate` function for one part of the request: its schema, and the document's input rule
 * that every string is text (lib/input-rules.ts), declared or not.
 */
export function hapiValidator(
  validate: ValidateFunction,
  onError: (fields: Record<string, string[]>) => DomainError = invalid,
) {
  return async (value: unknown) => {
    const data = value ?? {};
    const faults = textFaults(data);
    const valid = validate(data);
    if (valid && !Object.keys(faults).length) return data;
    const fields = valid ? {} : fieldErrors(validate.errors);
    for (const [field, messages] of Object.entries(faults)) {
      const existing = fields[field];
      if (existing) existing.push(...messages);
      else fields[field] = [...messages];
    }
    const error = onError(fields);
    // Boomified so hapi passes the domain error on as it is (the errors plugin shapes it).
    throw Boom.boomify(error, { statusCode: error.kind === 'validation' ? 422 : 400 });
  };
}
