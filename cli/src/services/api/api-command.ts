// `loyalty api <METHOD> <path>`: any operation of openapi.yaml, through the SDK client the other
// commands use (auth, retries, Idempotency-Key on POST/PUT/PATCH, pacing), like `gh api`.
import { toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import type { Pagination } from '../../generated/operations.js';
import { apiFailure, request, type ApiResult } from '../common/api.js';
import { buildFields, type JsonObject, type JsonValue, parseHeaders, queryOf } from './api-command-fields.js';
import { findOperation, splitPath, type Operation } from './api-command-operations.js';
import { checkPathAsWritten } from './api-command-path.js';
import { refuseSecretsOnArgv } from './api-command-secrets.js';
import { readTextInput } from '../common/inputs.js';

export interface ApiCommandOptions {
  field: string[];
  rawField: string[];
  header: string[];
  input?: string;
  paginate?: boolean;
  jsonl?: boolean;
  include?: boolean;
}

interface Init {
  params?: { query?: Record<string, string | string[]> };
  body?: unknown;
  headers?: Record<string, string>;
  parseAs: 'text';
}

/**
 * openapi-fetch's `request(method, path, init)`, untyped: the path is only known at run time and
 * has been checked against the document's operations instead of the type checker.
 */
type UntypedRequest = (method: string, path: string, init: Init & { signal: AbortSignal }) => Promise<ApiResult>;

/** What the request sends: the JSON body and the query, from --input and the fields. */
async function buildInit(ctx: Context, operation: Operation, query: URLSearchParams, options: ApiCommandOptions) {
  const fields = await buildFields({
    typed: options.field,
    raw: options.rawField,
    readFile: (path) => readTextInput(ctx, path),
  });
  const headers = parseHeaders(options.header);
  let body: JsonValue | undefined;
  let queryFields: JsonObject = {};
  if (options.input !== undefined) {
    if (operation.fields === 'query')
      throw usageError(`${operation.method} ${operation.path} takes no request body; drop --input.`);
    const text = await readTextInput(ctx, options.input);
    try {
      body = JSON.parse(text) as JsonValue;
    } catch (error) {
      throw usageError(`--input ${options.input} is not JSON: ${(error as Error).message}`);
    }
    queryFields = fields; // as gh: with --input, the fields are query parameters
  } else if (operation.fields === 'body') {
    if (Object.keys(fields).length > 0 || operation.method !== 'DELETE') body = fields;
  } else {
    queryFields = fields;
  }
  const params = queryOf(queryFields, query);
  return { body, query: params, headers };
}

const at = (value: unknown, path: readonly string[]): unknown =>
  path.reduce<unknown>(
    (current, key) =>
      current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined,
    value,
  );

function printJson(ctx: Context, value: unknown): void {
  ctx.output.stdout.write(ctx.output.jsonText(value, Boolean(ctx.output.stdout.isTTY)));
}

function printHead(ctx: Context, response: Response): void {
  const lines = [`HTTP/1.1 ${response.status} ${response.statusText}`.trimEnd()];
  response.headers.forEach((value, name) => {
    lines.push(`${name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())}: ${value}`);
  });
  ctx.output.write(`${lines.join('\n')}\n`);
}

const isJson = (response: Response): boolean => /\bjson\b/i.test(response.headers.get('content-type') ?? '');

export async function apiCommand(
  ctx: Context,
  methodInput: string,
  pathInput: string,
  options: ApiCommandOptions,
): Promise<void> {
  const { path, query } = splitPath(pathInput);
  refuseSecretsOnArgv({ typed: options.field, raw: options.rawField, query, headers: options.header });
  checkPathAsWritten(path);
  const operation = findOperation(methodInput, path);
  if (options.paginate && !operation.paginate)
    throw usageError(
      `${operation.method} ${operation.path} (${operation.operationId}) does not page; drop --paginate.`,
    );
  if (options.jsonl && !options.paginate) throw usageError('--jsonl goes with --paginate.');
  const { body, query: params, headers } = await buildInit(ctx, operation, query, options);
  const send = async (page: Page): Promise<Answer> => {
    const init: Init = {
      parseAs: 'text',
      ...(Object.keys(page.query).length > 0 ? { params: { query: page.query } } : {}),
      ...(page.body !== undefined ? { body: page.body } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
    const result = await request(ctx, (api, signal) =>
      (api.request as unknown as UntypedRequest)(operation.method, path, { ...init, signal }),
    );
    if (options.include) printHead(ctx, result.response);
    const error = toLoyaltyError(result);
    if (error) {
      if (result.error !== undefined)
        ctx.output.info(typeof result.error === 'string' ? result.error : JSON.stringify(result.error, null, 2));
      throw apiFailure(ctx, error, { sentBrand: false });
    }
    const text = typeof result.data === 'string' ? result.data : '';
    if (text === '') return undefined;
    if (!isJson(result.response)) return { text };
    try {
      return { json: JSON.parse(text) as unknown };
    } catch {
      throw new CliError(
        `${operation.method} ${path} answered ${result.response.status} with a body that is not JSON.`,
      );
    }
  };

  if (!options.paginate || !operation.paginate) {
    const answer = await send({ body, query: params });
    if (answer && 'text' in answer) ctx.output.write(answer.text);
    else if (answer) printJson(ctx, answer.json);
    return;
  }
  const items: unknown[] = [];
  for await (const page of pages(operation.paginate, body, params, send)) {
    if (options.jsonl) ctx.output.stdout.write(ctx.output.jsonLinesText(page));
    else items.push(...page);
  }
  if (!options.jsonl) printJson(ctx, items);
}

interface Page {
  body?: unknown;
  query: Record<string, string | string[]>;
}

/** A response body: JSON, other text, or none (204). */
export type Answer = { json: unknown } | { text: string } | undefined;

type SendPage = (page: Page) => Promise<Answer>;

/** The item arrays of every page, following the operation's paginator or cursor. */
export async function* pages(
  pagination: Pagination,
  body: JsonValue | undefined,
  query: Record<string, string | string[]>,
  send: SendPage,
): AsyncGenerator<unknown[], void, undefined> {
  const itemsOf = (answer: Answer): unknown[] => {
    const items = answer && 'json' in answer ? at(answer.json, pagination.items) : undefined;
    if (!Array.isArray(items)) throw new CliError(`A page has no ${pagination.items.join('.')} list.`);
    return items;
  };
  if (pagination.kind === 'cursor') {
    let cursor = typeof query[pagination.param] === 'string' ? (query[pagination.param] as string) : undefined;
    for (;;) {
      const answer = await send({
        body,
        query: cursor === undefined ? query : { ...query, [pagination.param]: cursor },
      });
      const items = itemsOf(answer);
      yield items;
      const next = answer && 'json' in answer ? at(answer.json, pagination.next) : undefined;
      // The event feed's cursor is never null: an empty page is its end.
      if (typeof next !== 'string' || next === cursor || items.length === 0) return;
      cursor = next;
    }
  }
  const bodyObject = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
  const first = Number(pagination.in === 'body' ? (bodyObject.page ?? 1) : (query.page ?? 1));
  for (let page = Number.isInteger(first) && first > 0 ? first : 1; ; page++) {
    const answer = await send(
      pagination.in === 'body'
        ? { body: { ...bodyObject, page }, query }
        : { body, query: { ...query, page: String(page) } },
    );
    const items = itemsOf(answer);
    yield items;
    const last = answer && 'json' in answer ? at(answer.json, pagination.lastPage) : undefined;
    if (typeof last !== 'number' || page >= last || items.length === 0) return;
  }
}
