import fc from 'fast-check';
import type { Operation, OpenApiDocument } from '../../server/src/lib/openapi.js';
import { arbitraryOf, type Hints } from './schema-arbitrary.js';

/** One request of the fuzz, as `server.inject` takes it, with the name of what was done to it. */
export type FuzzRequest = {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** `valid`, or the mutation applied (`body:nul`, `query:duplicate`, `path:odd`, …). */
  kind: string;
  /** Whose token: `right` organization, `wrong` organization, `readonly`, `device-as-admin`, `none`, `garbage`. */
  as: string;
};

/** Bearer headers of the fixture clients, by the role they play for an operation. */
export type Tokens = { admin: string; readonly: string; globex: string; till: string; globexTill: string };

const NUL = '\u0000';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';
const EMOJI = '👩‍👩‍👧‍👦🏳️‍🌈';
const HUGE = 'x'.repeat(100_000);
/** Stands for a nested array too deep to write as a value (replaced in the JSON text). */
const DEEP = '\u0001deep\u0001';
const DEEP_JSON = '['.repeat(5000) + ']'.repeat(5000);

const oddStrings = fc.constantFrom(
  '',
  ' ',
  `a${NUL}b`,
  NUL,
  `a${LONE_HIGH}b`,
  `${LONE_LOW}`,
  EMOJI,
  HUGE,
  'ä'.repeat(256),
  '\u202eevil',
  '0',
  '-1',
  'null',
  'true',
  '1e400',
  '99999999999999999999',
  '0001-01-01',
  '9999-12-31T23:59:59Z',
  '10000-01-01',
  '2026-02-30',
  ' brand-acme ',
  'BRAND-ACME',
  '<script>',
  "' OR 1=1 --",
  '%00',
  '../../etc/passwd',
  'a'.repeat(255),
  'a'.repeat(256),
  'a@b',
  '\r\n',
  '\t',
);
const oddNumbers = fc.constantFrom(
  0,
  -0,
  -1,
  1.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  -(2 ** 53),
  1e308,
  1e-308,
  Number.MAX_SAFE_INTEGER + 2,
  99999999999,
);
const wrongTypes = fc.constantFrom<unknown>(
  null,
  true,
  false,
  0,
  1,
  -1,
  1.5,
  '',
  'x',
  [],
  {},
  [1, 'a'],
  { a: 1 },
  [[[]]],
  { '': null },
);
const oddPathSegments = fc.constantFrom(
  '',
  '%00',
  'a%00b',
  '%2F',
  'a%2Fb',
  '..',
  '.',
  '%2E%2E',
  '%ED%A0%80',
  '%FF',
  '%',
  '%zz',
  'x'.repeat(5000),
  encodeURIComponent(EMOJI),
  '%20',
  '-1',
  '0',
  '99999999999999999999',
  'null',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '{id}',
  ';x=1',
);

/** Every node of a JSON value, by its path (keys and indexes), the root first. */
function paths(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(value)) for (const [i, v] of value.entries()) paths(v, [...at, i], out);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...at, k], out);
  return out;
}

function setAt(root: unknown, at: (string | number)[], change: (parent: any, key: string | number) => void): unknown {
  const copy = structuredClone(root);
  if (!at.length) return copy;
  let parent: any = copy;
  for (const key of at.slice(0, -1)) parent = parent[key];
  change(parent, at[at.length - 1]!);
  return copy;
}

/** A mutation of a valid JSON value: one node replaced, removed, or given company. */
function mutatedValue(value: unknown): fc.Arbitrary<{ value: unknown; kind: string }> {
  const all = paths(value);
  const replace = (kind: string, arb: fc.Arbitrary<unknown>) =>
    fc.tuple(fc.nat({ max: all.length - 1 }), arb).map(([i, v]) => {
      const at = all[i]!;
      return {
        kind,
        value: at.length
          ? setAt(value, at, (p, k) => {
              p[k] = v;
            })
          : v,
      };
    });
  const inside = all.filter((p) => p.length > 0);
  const objects = all.filter((p) => {
    const n = p.reduce<any>((o, k) => o[k], value);
    return n && typeof n === 'object' && !Array.isArray(n);
  });
  const arrays = all.filter((p) => Array.isArray(p.reduce<any>((o, k) => o[k], value)));
  const options: fc.Arbitrary<{ value: unknown; kind: string }>[] = [
    replace('wrong-type', wrongTypes),
    replace('odd-string', oddStrings),
    replace('odd-number', oddNumbers),
    replace(
      'nul',
      fc.string().map((s) => `${s}${NUL}${s}`),
    ),
    replace(
      'surrogate',
      fc.string({ unit: 'binary' }).map((s) => `${s}${LONE_HIGH}`),
    ),
    replace('any-unicode', fc.string({ unit: 'binary', maxLength: 60 })),
    replace('deep-nesting', fc.constant(DEEP)),
  ];
  if (inside.length) {
    options.push(
      fc.nat({ max: inside.length - 1 }).map((i) => ({
        kind: 'missing-field',
        value: setAt(value, inside[i]!, (p, k) => (Array.isArray(p) ? p.splice(Number(k), 1) : delete p[k])),
      })),
    );
  }
  if (objects.length) {
    options.push(
      fc
        .tuple(
          fc.nat({ max: objects.length - 1 }),
          fc.constantFrom('extra', '__proto__', 'constructor', '', `k${NUL}`, `k${LONE_HIGH}`, EMOJI),
          wrongTypes,
        )
        .map(([i, key, v]) => ({
          kind: 'extra-field',
          value: setAt({ root: value }, ['root', ...objects[i]!], (p, k) => {
            Object.defineProperty(p[k], key, { value: v, enumerable: true, configurable: true, writable: true });
          }) as { root: unknown },
        }))
        .map(({ kind, value: v }) => ({ kind, value: (v as { root: unknown }).root })),
    );
  }
  if (arrays.length) {
    options.push(
      fc
        .tuple(fc.nat({ max: arrays.length - 1 }), fc.constantFrom(2001, 10_001))
        .map(([i, n]) => ({
          kind: 'long-array',
          value: setAt({ root: value }, ['root', ...arrays[i]!], (p, k) => {
            const a = p[k] as unknown[];
            p[k] = Array.from({ length: n }, (_, j) => a[j % Math.max(a.length, 1)] ?? j);
          }),
        }))
        .map(({ kind, value: v }) => ({ kind, value: (v as { root: unknown }).root })),
    );
  }
  return fc.oneof(...options);
}

const jsonText = (value: unknown) => JSON.stringify(value)?.replaceAll(JSON.stringify(DEEP), DEEP_JSON) ?? '';

/** A form body from a flat object (OAuth token requests): nested values as JSON text. */
const formText = (value: unknown) => {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return String(value);
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(value)) form.append(k, typeof v === 'string' ? v : jsonText(v));
  return form.toString();
};

/** encodeURIComponent that also writes a lone surrogate (as the bytes UTF-8 would give it, which are not UTF-8). */
const encode = (s: string) =>
  s
    .split(/([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/)
    .map((part, i) => {
      if (i % 2 === 0) return encodeURIComponent(part);
      const cp = part.charCodeAt(0);
      return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    })
    .join('');

/** A query string from an object: arrays as repeated keys (form style, explode). */
function queryText(value: Record<string, unknown>, duplicate = false): string {
  const parts: string[] = [];
  const put = (k: string, v: unknown) => parts.push(`${encode(k)}=${encode(typeof v === 'string' ? v : jsonText(v))}`);
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) put(k, item);
    else put(k, v);
    if (duplicate) put(k, typeof v === 'string' ? `${v}2` : v);
  }
  return parts.join('&');
}

type Part = 'path' | 'query' | 'body' | 'raw-body' | 'none';

/**
 * Requests for one operation, built from its schemas in openapi.yaml: about a third valid, the
 * rest with one part mutated; each with a token of the right organization or a wrong one.
 */
export function requestsFor(
  document: OpenApiDocument,
  op: Operation,
  hints: Hints,
  tokens: Tokens,
): fc.Arbitrary<FuzzRequest> {
  const form = op.path === '/oauth/token';
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const objectOf = (params: typeof pathParams) => ({
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
    required: params.filter((p) => p.required).map((p) => p.name),
  });
  const validPath = arbitraryOf(document, objectOf(pathParams), hints) as fc.Arbitrary<Record<string, unknown>>;
  const validQuery = arbitraryOf(document, objectOf(queryParams), hints) as fc.Arbitrary<Record<string, unknown>>;
  const validBody = op.bodySchema ? arbitraryOf(document, op.bodySchema, hints) : fc.constant(undefined);
  const idempotent = op.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');

  const right = op.deviceOnly ? tokens.till : tokens.admin;
  const auth = fc.oneof(
    { weight: 6, arbitrary: fc.constant({ as: 'right', header: right }) },
    { weight: 2, arbitrary: fc.constant({ as: 'wrong', header: op.deviceOnly ? tokens.globexTill : tokens.globex }) },
    {
      weight: 1,
      arbitrary: fc.constant(
        op.deviceOnly
          ? { as: 'admin-on-device-route', header: tokens.admin }
          : { as: 'readonly', header: tokens.readonly },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { as: 'none', header: '' },
        { as: 'garbage', header: 'Bearer not-a-token' },
        { as: 'garbage', header: `Bearer ${'a'.repeat(5000)}` },
        { as: 'garbage', header: 'Basic YTpi' },
      ),
    },
  );
  const parts: Part[] = [
    'none',
    'none',
    ...(pathParams.length ? ['path' as const] : []),
    ...(queryParams.length ? ['query' as const] : []),
    ...(op.bodySchema ? ['body' as const, 'body' as const, 'raw-body' as const] : []),
    'raw-body',
  ];

  return fc
    .record({
      path: validPath,
      query: validQuery,
      body: validBody,
      auth,
      part: fc.constantFrom(...parts),
      seed: fc.nat(),
      key: fc.option(fc.uuid()),
    })
    .chain(({ path, query, body, auth: a, part, key }) => {
      const base = (
        kind: string,
        p: Record<string, string>,
        q: string,
        payload: string | undefined,
        contentType = form ? 'application/x-www-form-urlencoded' : 'application/json',
      ): FuzzRequest => {
        const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => p[name] ?? encode(String(path[name] ?? '')));
        const headers: Record<string, string> = {};
        if (a.header) headers.authorization = a.header;
        if (payload !== undefined && contentType) headers['content-type'] = contentType;
        if (idempotent && key) headers['idempotency-key'] = key;
        return {
          method: op.method,
          url: q ? `${url}?${q}` : url,
          headers,
          ...(payload !== undefined && { payload }),
          kind,
          as: a.as,
        };
      };
      const encodeBody = (v: unknown) => (v === undefined ? undefined : form ? formText(v) : jsonText(v));
      const q = queryText(query);
      switch (part) {
        case 'path':
          return fc
            .tuple(fc.constantFrom(...pathParams.map((p) => p.name)), oddPathSegments)
            .map(([name, seg]) => base('path:odd', { [name]: seg }, q, encodeBody(body)));
        case 'query':
          return fc.oneof(
            fc.constant(base('query:duplicate', {}, queryText(query, true), encodeBody(body))),
            mutatedValue(query).map((m) =>
              base(
                `query:${m.kind}`,
                {},
                m.value && typeof m.value === 'object' && !Array.isArray(m.value)
                  ? queryText(m.value as Record<string, unknown>)
                  : `x=${encode(jsonText(m.value))}`,
                encodeBody(body),
              ),
            ),
            fc
              .constantFrom(
                '%',
                '%zz',
                '%ED%A0%80',
                '%FF',
                'a=%00',
                '&&&',
                '=',
                `${q}&${q}`,
                `${q}#frag`,
                'x'.repeat(20_000),
              )
              .map((raw) => base('query:raw', {}, raw, encodeBody(body))),
          );
        case 'body':
          return mutatedValue(body ?? {}).map((m) => base(`body:${m.kind}`, {}, q, encodeBody(m.value)));
        case 'raw-body': {
          const text = encodeBody(body) ?? '{}';
          return fc.oneof(
            fc.constant(base('raw-body:empty', {}, q, '')),
            fc
              .nat({ max: Math.max(text.length - 1, 0) })
              .map((n) => base('raw-body:truncated', {}, q, text.slice(0, n))),
            fc
              .constantFrom(
                'text/plain',
                'application/xml',
                'multipart/form-data; boundary=x',
                'application/json; charset=latin1',
                'application/x-www-form-urlencoded',
                'application/json',
                '',
              )
              .map((ct) => base(`raw-body:content-type ${ct || '(none)'}`, {}, q, text, ct)),
            fc
              .constantFrom(
                'null',
                '[]',
                '"s"',
                '1',
                'true',
                '{"a":1,"a":2}',
                `\ufeff${text}`,
                '{"a":"\\ud800"}',
                '{"a":"\\u0000"}',
                DEEP_JSON,
                '{'.repeat(3000),
                'not json',
                text + text,
              )
              .map((raw) => base('raw-body:odd-json', {}, q, form ? raw : raw)),
          );
        }
        default:
          return fc.constant(base('valid', {}, q, encodeBody(body)));
      }
    });
}
