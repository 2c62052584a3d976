/**
 * What the client hands its transport for a call: a `ReplayableRequest` (a Request that keeps the
 * body it was made with) or, when no middleware will see the call, a lighter `CallRequest`; and
 * the base-URL checks that let a call skip parsing its URL.
 */
import type { HeaderBag } from './headers.js';

/**
 * A Request that remembers the body it was made with, so attempts resend that body instead of
 * reading (and buffering) the request's stream. The client hands it to openapi-fetch.
 */
export class ReplayableRequest extends Request {
  readonly replayBody: BodyInit | null | undefined;
  /** False when made from a URL without a signal: its own signal can then never abort. */
  readonly abortable: boolean;
  constructor(input: RequestInfo | URL, init?: RequestInit) {
    super(input, init);
    this.replayBody = init?.body;
    this.abortable = init?.signal != null || input instanceof Request;
  }
}

/**
 * A call as the client makes it when no middleware will see it: the URL and what `fetch` needs,
 * without a `Request` of its own. Each attempt is then one `fetch(url, init)`, which builds the
 * only Request (a Request template would cost a second one, and undici would tie the attempt's
 * Request to the template's signal). `callRequest` makes one only where a Request would have
 * accepted the same input, so errors stay those of a Request.
 */
export class CallRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: HeaderBag;
  readonly body: string | undefined;
  /** The caller's signal, if any. */
  readonly signal: AbortSignal | undefined;
  constructor(
    url: string,
    init: {
      method?: string;
      headers: HeaderBag;
      body?: string | null | undefined;
      signal?: AbortSignal | null | undefined;
    },
  ) {
    this.url = url;
    this.method = init.method ?? 'GET';
    this.headers = init.headers;
    this.body = init.body ?? undefined;
    this.signal = init.signal ?? undefined;
  }
}

/**
 * True when `url` is `base` (an http(s) URL known to parse) followed by a path, query or fragment:
 * those parts of an http(s) URL always parse, so the URL does (cheaper than parsing it per call).
 */
export const isBelow = (url: string, base: string | undefined) =>
  base !== undefined && url.startsWith(base) && (url.length === base.length || '/?#'.includes(url.charAt(base.length)));

/** `baseUrl` when it is an http(s) URL that parses and ends before a path (see `isBelow`), else undefined. */
export function trustedBase(baseUrl: string): string | undefined {
  if (!URL.canParse(baseUrl)) return undefined;
  const { protocol, search, hash } = new URL(baseUrl);
  return (protocol === 'http:' || protocol === 'https:') && !search && !hash ? baseUrl : undefined;
}

const callMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const callKeys = new Set(['method', 'headers', 'body', 'signal', 'redirect']);

/**
 * A `CallRequest` for what openapi-fetch passes to its Request class, when nothing in it needs a
 * Request's checks or conversions (a string body or none, a known method, a valid URL, the default
 * redirect mode); otherwise a `ReplayableRequest`, which also throws the errors a Request throws.
 */
export function callRequest(url: string, init: RequestInit, base?: string): CallRequest | ReplayableRequest {
  const { method = 'GET', body, signal, headers } = init;
  let plain =
    callMethods.has(method) &&
    (body == null || (typeof body === 'string' && method !== 'GET' && method !== 'HEAD')) &&
    headers instanceof Headers &&
    (signal == null || signal instanceof AbortSignal) &&
    (init.redirect === undefined || init.redirect === 'follow') &&
    (isBelow(url, base) || URL.canParse(url));
  if (plain) for (const key in init) if (!callKeys.has(key)) plain = false;
  return plain
    ? new CallRequest(
        url,
        init as RequestInit & { headers: Headers; body?: string | null; signal?: AbortSignal | null },
      )
    : new ReplayableRequest(url, init);
}
