import fc from 'fast-check';
import { deref, type OpenApiDocument } from '../../server/src/lib/openapi.js';

type Schema = Record<string, unknown>;

/**
 * Values the fixtures know, by property (or parameter) name: a request built only from the schema
 * would almost always name an unknown brand or member and stop at 404, never reaching the code
 * behind it. Four in five generated values of such a field are taken from here; with `{ only }`,
 * all of them (for a field whose valid values cost time, like the seconds of a long poll).
 */
export type Hints = Record<string, readonly unknown[] | { only: readonly unknown[] }>;

/**
 * A fast-check arbitrary of values that satisfy a JSON Schema of openapi.yaml (the subset the
 * document uses: type, enum, const, properties/required, items, lengths, bounds, pattern, the
 * formats it names, allOf/oneOf/anyOf and local $refs). Deliberately small: where a keyword is
 * not modelled, the value may be invalid, which the fuzz accepts as a 4xx.
 */
export function arbitraryOf(
  document: OpenApiDocument,
  schema: unknown,
  hints: Hints = {},
  name?: string,
  depth = 0,
): fc.Arbitrary<unknown> {
  const node = deref<Schema>(document, schema) ?? {};
  const own = schemaArbitrary(document, node, hints, depth);
  const hinted = name !== undefined ? hints[name] : undefined;
  if (!hinted) return own;
  if ('only' in hinted) return fc.constantFrom(...hinted.only);
  // A name means different things in different operations (`email`: one address, or a list).
  const fitting = hinted.filter((v) => fits(node, v));
  return fitting.length
    ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fitting) }, { weight: 1, arbitrary: own })
    : own;
}

function schemaArbitrary(document: OpenApiDocument, node: Schema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  if (node.const !== undefined) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as unknown[]));
  if (Array.isArray(node.allOf)) {
    // Merged shallowly: the document's allOf combine object shapes.
    const merged = (node.allOf as unknown[])
      .map((s) => deref<Schema>(document, s))
      .reduce<Schema>(mergeObjects, { ...node, allOf: undefined });
    delete merged.allOf;
    return schemaArbitrary(document, merged, hints, depth);
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(node[key])) {
      const { [key]: branches, ...rest } = node;
      return fc.oneof(
        ...(branches as unknown[]).map((b) =>
          schemaArbitrary(document, mergeObjects(rest, deref<Schema>(document, b)), hints, depth + 1),
        ),
      );
    }
  }
  const types = ([] as string[]).concat(
    (node.type as string | string[] | undefined) ?? (node.properties ? 'object' : []),
  );
  if (types.length > 1)
    return fc.oneof(...types.map((type) => schemaArbitrary(document, { ...node, type }, hints, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerOf(node);
    case 'number':
      return fc.double({
        min: num(node.minimum, -1e9),
        max: num(node.maximum, 1e9),
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'string':
      return stringOf(node);
    case 'array': {
      const minLength = num(node.minItems, 0);
      const maxLength = Math.min(num(node.maxItems, 5), minLength + 5);
      return fc.array(arbitraryOf(document, node.items ?? {}, hints, undefined, depth + 1), { minLength, maxLength });
    }
    case 'object': {
      if (depth > 6) return fc.constant({});
      const properties = (node.properties as Record<string, unknown> | undefined) ?? {};
      const required = new Set((node.required as string[] | undefined) ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(properties)) {
        // `name: false` (a oneOf branch that forbids the other branch's field): never sent.
        if (sub !== false) record[key] = arbitraryOf(document, sub, hints, key, depth + 1);
      }
      return fc.record(record, { requiredKeys: Object.keys(record).filter((k) => required.has(k)) });
    }
    default:
      return fc.oneof(fc.string(), fc.integer(), fc.boolean());
  }
}

/** Both shapes' properties and required fields (allOf parts, or a oneOf branch with its parent). */
const mergeObjects = (a: Schema, b: Schema): Schema => ({
  ...a,
  ...b,
  properties: { ...(a.properties as Schema), ...(b.properties as Schema) },
  required: [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])],
});

/** Whether a hinted value has a type the schema allows (the schema's other keywords aside). */
function fits(node: Schema, value: unknown): boolean {
  const types = ([] as string[]).concat((node.type as string | string[] | undefined) ?? []);
  if (!types.length) return true;
  const type = Array.isArray(value)
    ? 'array'
    : value === null
      ? 'null'
      : Number.isInteger(value)
        ? 'integer'
        : typeof value;
  return types.includes(type) || (type === 'integer' && types.includes('number'));
}

const num = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

function integerOf(node: Schema): fc.Arbitrary<number> {
  const min = Math.max(num(node.minimum, -1000), Number.MIN_SAFE_INTEGER);
  const max = Math.min(num(node.maximum, Math.max(min + 1000, 1000)), Number.MAX_SAFE_INTEGER);
  // Bounds themselves are where off-by-one mistakes live: a third of the values are a bound.
  return fc.oneof(
    { arbitrary: fc.integer({ min, max }), weight: 2 },
    { arbitrary: fc.constantFrom(min, max), weight: 1 },
  );
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

function stringOf(node: Schema): fc.Arbitrary<string> {
  switch (node.format) {
    case 'email':
      return fc.emailAddress();
    case 'uuid':
      return fc.uuid();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'date':
      return fc
        .tuple(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
        .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
    case 'date-time':
      return fc
        .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
  }
  const minLength = num(node.minLength, 0);
  const maxLength = num(node.maxLength, Math.max(minLength, 40));
  if (typeof node.pattern === 'string') {
    return fc
      .stringMatching(new RegExp(node.pattern, 'u'))
      .filter((s) => s.length >= minLength && s.length <= maxLength);
  }
  return fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 40), unit: 'grapheme' });
}
