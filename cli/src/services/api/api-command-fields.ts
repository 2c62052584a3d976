// `loyalty api --field` / `--raw-field` / `--header`: the parameters a request is built from, as
// `gh api` reads them. `--field` is typed (numbers, true, false, null; `@file` reads a file, `@-`
// stdin), `--raw-field` is always a string; `key[]=v` appends to an array, `key[sub]=v` nests.
import { usageError } from '../../errors.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** `--field` typing: what gh types (true, false, null, integers) plus decimal numbers. */
export function typedValue(text: string): JsonValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  }
  return text;
}

/** `name`, `name[]`, `name[a][b]`, `name[a][]` → the key path; '' is "append". */
function keyPath(key: string, flag: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match?.[1]) throw usageError(`${flag} ${JSON.stringify(key)}: the name must be like key, key[] or key[sub].`);
  const rest = [...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '');
  if (rest.slice(0, -1).includes('')) throw usageError(`${flag} ${JSON.stringify(key)}: [] may only come last.`);
  return [match[1], ...rest];
}

function assign(target: JsonObject, path: string[], value: JsonValue, flag: string, key: string): void {
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  if (rest.length === 1 && rest[0] === '') {
    const existing = target[head];
    if (existing !== undefined && !Array.isArray(existing))
      throw usageError(`${flag} ${key}: ${head} was given as a value already, not a list.`);
    target[head] = [...(existing ?? []), value];
    return;
  }
  const existing = target[head];
  if (existing !== undefined && (typeof existing !== 'object' || existing === null || Array.isArray(existing)))
    throw usageError(`${flag} ${key}: ${head} was given as a value already, not an object.`);
  const child: JsonObject = (existing as JsonObject | undefined) ?? {};
  target[head] = child;
  assign(child, rest, value, flag, key);
}

export interface FieldInput {
  /** `--field` values, `key=value`. */
  typed: readonly string[];
  /** `--raw-field` values, `key=value`. */
  raw: readonly string[];
  /** Reads `@path` (`@-` is stdin) for a typed field. */
  readFile: (path: string) => Promise<string>;
}

function split(pair: string, flag: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw usageError(`${flag} ${JSON.stringify(pair)} is not key=value.`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/** The parameters, in the order given (`--raw-field` after `--field`, as commander collects them). */
export async function buildFields(input: FieldInput): Promise<JsonObject> {
  const fields: JsonObject = {};
  for (const pair of input.typed) {
    const [key, text] = split(pair, '--field');
    const value = text.startsWith('@') ? await input.readFile(text.slice(1)) : typedValue(text);
    assign(fields, keyPath(key, '--field'), value, '--field', key);
  }
  for (const pair of input.raw) {
    const [key, text] = split(pair, '--raw-field');
    assign(fields, keyPath(key, '--raw-field'), text, '--raw-field', key);
  }
  return fields;
}

/** `--header "Name: value"` lines as a record; a malformed one is a usage error. */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    const name = at > 0 ? line.slice(0, at).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw usageError(`--header ${JSON.stringify(line)} is not "Name: value".`);
    headers[name] = line.slice(at + 1).trim();
  }
  return headers;
}

/** Query parameters from fields: nested values are refused, lists repeat the key. */
export function queryOf(fields: JsonObject, base: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of base) {
    const existing = query[key];
    query[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) query[key] = value.map((item) => scalar(key, item));
    else query[key] = scalar(key, value);
  }
  return query;
}

function scalar(key: string, value: JsonValue): string {
  if (value !== null && typeof value === 'object')
    throw usageError(`--field ${key}: a query parameter cannot be an object.`);
  return String(value);
}
