import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import {
  AddressNotAllowedError,
  addressAllowed,
  addressPolicyOf,
  createCheckedLookup,
  hostOf,
  type AddressPolicy,
  type Resolver,
} from './ssrf.js';
import { defined } from './defined.js';

/** The error codes of the delivery log (openapi.yaml, WebhookDeliveryAttempt.error). */
export type AttemptError =
  | 'timeout'
  | 'connection_error'
  | 'redirect_not_followed'
  | 'http_status'
  | 'address_not_allowed';

export type PostResult = {
  statusCode: number | null;
  error: AttemptError | null;
  durationMs: number;
  /** The sanitized start of a text response body (see snippetOf); null when none. */
  snippet: string | null;
};

/**
 * The delivery log shows this many characters of a response at most: enough for an error code or
 * a short message from the receiver (`signature_mismatch`, `{"error":"invalid signature"}`), too
 * little to make the log a way of reading other services' pages, banners or data through this
 * server (a tenant chooses the URL).
 */
export const SNIPPET_CHARS = 64;
/** Bytes read from a response at most (SNIPPET_CHARS of UTF-8 at 4 bytes each): a receiver cannot make us buffer more. */
export const MAX_RESPONSE_BYTES = SNIPPET_CHARS * 4;

export type WebhookClient = {
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  close: () => Promise<void>;
};

/**
 * The HTTP client of webhook deliveries: undici Agents (keep-alive connections per origin) whose
 * sockets resolve names through a checked lookup, so every connection goes to an address that
 * passed the SSRF check: one Agent per address policy (public addresses; in development mode any
 * address, or only local ones on ports public hosts may not be sent to). A URL whose scheme or
 * port breaks the rule is not sent at all, and literal IP hosts, which sockets do not look up,
 * are checked here. Redirects are never followed; the whole attempt (connect, headers, the first
 * bytes of the body) is bounded by `timeoutMs`.
 */
export function createWebhookClient(options: {
  timeoutMs: number;
  allowInsecure: boolean;
  resolve?: Resolver;
  connections?: number;
}): WebhookClient {
  const agents = new Map<AddressPolicy, Agent>();
  const agentFor = (policy: AddressPolicy) => {
    let agent = agents.get(policy);
    if (!agent) {
      agent = new Agent({
        connect: { lookup: createCheckedLookup({ policy, resolve: options.resolve }), timeout: options.timeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        keepAliveTimeout: 10_000,
        connections: options.connections ?? 64,
      });
      agents.set(policy, agent);
    }
    return agent;
  };

  async function post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const parsed = new URL(url);
    const host = hostOf(parsed);
    const policy = addressPolicyOf(parsed, options);
    if (!policy || (isIP(host) && !addressAllowed(policy, host))) {
      return { statusCode: null, error: 'address_not_allowed', durationMs: elapsed(), snippet: null };
    }
    const signal = AbortSignal.timeout(options.timeoutMs);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(parsed, {
        method: 'POST',
        dispatcher: agentFor(policy),
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'Loyalty-Webhooks/1.0', ...headers },
        signal,
      });
    } catch (error) {
      return { statusCode: null, error: classify(error, signal), durationMs: elapsed(), snippet: null };
    }
    // The status arrived in time: the body is read only for the log, capped and best effort.
    const start = await readStart(response.body, signal);
    const status = response.statusCode;
    // A redirect is never followed; the log shows where it pointed instead of its body.
    const location = status >= 300 && status < 400 ? response.headers.location : undefined;
    const snippet =
      location === undefined
        ? snippetOf(start, response.headers['content-type'])
        : snippetOf(Buffer.from(`Location: ${String(location)}`), 'text/plain');
    const error: AttemptError | null =
      status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect_not_followed' : 'http_status';
    return { statusCode: status, error, durationMs: elapsed(), snippet };
  }

  return { post, close: async () => void (await Promise.all([...agents.values()].map((agent) => agent.close()))) };
}

/** Delivered, retried, or final, as the spec's table says. */
export function outcomeOf(result: PostResult): 'delivered' | 'retry' | 'final' {
  const status = result.statusCode;
  if (status === null) return 'retry';
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'final';
  return 'retry';
}

/** Up to MAX_RESPONSE_BYTES from the start of the body, best effort. */
async function readStart(
  body: AsyncIterable<Buffer> & { destroy: (error?: Error) => unknown },
  signal: AbortSignal,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (signal.aborted) break;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) break;
    }
  } catch {
    // a receiver that resets or stalls after the status: keep what arrived
  } finally {
    // Leaving the loop early destroys the stream (and, past the cap, its connection).
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES);
}

/** Media types whose bodies are text a person can read: text/*, JSON, XML, forms. */
const TEXT_TYPE = /^(text\/[\w.+-]+|application\/([\w.-]+\+)?(json|xml)|application\/x-www-form-urlencoded)$/i;
/** Whitespace (every line break included: JavaScript's \s lacks NEL) becomes one space: the snippet is one line. */
const SPACES = /[\s\u0085]+/g;
/**
 * What a log reader's terminal or page must not receive: control characters (escape sequences),
 * format characters (bidirectional overrides, zero-width characters), private-use, unassigned
 * and lone surrogate code points.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}]/gu;

/**
 * The delivery log's view of a response body: only a text body (a text-like Content-Type, or
 * none and valid UTF-8 without NUL), whitespace runs as one space, every unprintable character
 * as U+FFFD, at most SNIPPET_CHARS characters; null for anything else or nothing. The status
 * code is logged apart, whatever the body.
 */
export function snippetOf(start: Buffer, contentType: string | string[] | undefined): string | null {
  if (!start.length) return null;
  // split() always returns at least one piece.
  const mime = defined(String(contentType ?? '').split(';')[0], 'the media type').trim();
  // The read may end inside a UTF-8 sequence: a cut sequence at the end is dropped, not shown.
  let text = start.toString('utf8').replace(/\uFFFD+$/, '');
  if (mime) {
    if (!TEXT_TYPE.test(mime)) return null;
  } else if (text.includes('\uFFFD') || text.includes('\0')) {
    return null;
  }
  text = text.replace(SPACES, ' ').replace(UNPRINTABLE, '\uFFFD').trim();
  const snippet = [...text].slice(0, SNIPPET_CHARS).join('').trimEnd();
  return snippet || null;
}

function classify(error: unknown, signal: AbortSignal): AttemptError {
  for (let e = error as { code?: string; name?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e instanceof AddressNotAllowedError || e.code === 'ERR_ADDRESS_NOT_ALLOWED') return 'address_not_allowed';
    if (e.code === 'UND_ERR_CONNECT_TIMEOUT' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.name === 'TimeoutError')
      return 'timeout';
  }
  return signal.aborted ? 'timeout' : 'connection_error';
}
