/**
 * Calls that no middleware sees, made without openapi-fetch's per-call machinery: the URL, headers
 * and body openapi-fetch would build (with its own serializers), handed to the transport as a
 * `CallRequest` whose headers are a plain record (no `Headers` object, no `Request`), and the
 * response shaped into `{ data, error, response }` exactly as openapi-fetch shapes it.
 * `isLeanInit` admits only the options this path treats exactly as openapi-fetch does; any other
 * call goes through openapi-fetch. `lean-call.test.ts` runs both side by side.
 */
import { createFinalURL, createQuerySerializer, defaultBodySerializer, mergeHeaders } from 'openapi-fetch';
import { CallRequest, isBelow } from './call-request.js';
import type { HeaderBag } from './headers.js';
import { pathSerializer } from './path-serializer.js';

// openapi-fetch 0.17 calls it with the merged headers (a form content type selects URL encoding);
// its type declares the body only.
const serializeBody = defaultBodySerializer as (
  body: unknown,
  headers: Headers | Record<string, string>,
) => string | undefined;

/** The methods served this way (openapi-fetch's HEAD and TRACE handling stays its own). */
export const leanMethods = new Set(['GET', 'PUT', 'POST', 'PATCH', 'DELETE']);

const leanKeys = new Set(['params', 'headers', 'body', 'signal', 'parseAs', 'middleware']);

interface LeanInit {
  params?: { path?: Record<string, unknown>; query?: Record<string, unknown>; header?: Record<string, unknown> };
  headers?: unknown;
  body?: unknown;
  signal?: AbortSignal | null;
  parseAs?: 'json' | 'text' | 'blob' | 'arrayBuffer' | 'stream';
}

/** True when a call's options are ones this path handles exactly as openapi-fetch does. */
export function isLeanInit(init: unknown): init is LeanInit | undefined {
  if (init === undefined) return true;
  if (typeof init !== 'object' || init === null) return false;
  for (const key in init) if (!leanKeys.has(key)) return false;
  const { params, body, signal, middleware } = init as LeanInit & { middleware?: unknown };
  return (
    (params === undefined || (typeof params === 'object' && params !== null)) &&
    !(body instanceof FormData) &&
    (signal == null || signal instanceof AbortSignal) &&
    (middleware === undefined || (Array.isArray(middleware) && middleware.length === 0))
  );
}

/** What openapi-fetch resolves a call with. */
export type CallResult = { data?: unknown; error?: unknown; response: Response };

/**
 * `call(method, path, init)` for a `leanMethods` method and an init `isLeanInit` accepts.
 * `baseHeaders` are the client's default headers (openapi-fetch's `headers` option).
 */
export function leanCaller(
  baseUrl: string,
  trusted: string | undefined,
  baseHeaders: Record<string, string>,
  send: (call: CallRequest) => Promise<Response>,
): (method: string, schemaPath: string, init: LeanInit | undefined) => Promise<CallResult> {
  const querySerializer = createQuerySerializer();
  return async (method, schemaPath, init) => {
    const params = init?.params;
    const custom = init?.headers !== undefined || params?.header !== undefined;
    const own = [init?.headers, params?.header] as HeadersInit[];
    // openapi-fetch's body serializer sees the merged default, call and params.header headers.
    const body =
      init?.body === undefined
        ? undefined
        : serializeBody(init.body, custom ? mergeHeaders(baseHeaders, ...own) : baseHeaders);
    const url = params
      ? createFinalURL(schemaPath, { baseUrl, params, querySerializer, pathSerializer })
      : baseUrl + schemaPath;
    let headers: HeaderBag;
    // The call's own headers are merged as openapi-fetch merges them (a Headers validates them);
    // the client's defaults alone are known to be valid and lower case.
    if (custom)
      headers = mergeHeaders(body === undefined ? {} : { 'Content-Type': 'application/json' }, baseHeaders, ...own);
    else headers = Object.assign(body === undefined ? {} : { 'content-type': 'application/json' }, baseHeaders);
    if ((body !== undefined && method === 'GET') || !(isBelow(url, trusted) || URL.canParse(url)))
      new Request(url, { method, body }); // throws the TypeError openapi-fetch's Request would
    const response = await send(new CallRequest(url, { method, headers, body, signal: init?.signal }));
    // openapi-fetch's handling of the response (HEAD aside: not served here).
    const parseAs = init?.parseAs ?? 'json';
    const contentLength = response.headers.get('Content-Length');
    if (
      response.status === 204 ||
      (contentLength === '0' && !response.headers.get('Transfer-Encoding')?.includes('chunked'))
    )
      return response.ok ? { data: undefined, response } : { error: undefined, response };
    if (response.ok) {
      if (parseAs === 'stream') return { data: response.body, response };
      if (parseAs === 'json' && !contentLength) {
        const raw = await response.text();
        return { data: raw ? JSON.parse(raw) : undefined, response };
      }
      return { data: await response[parseAs](), response };
    }
    let error: unknown = await response.text();
    try {
      error = JSON.parse(error as string);
    } catch {
      // not JSON: the text
    }
    return { error, response };
  };
}
