import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { AddressNotAllowedError, createCheckedLookup, hostOf, isPublicAddress, type Resolver } from './ssrf.js';

/** The error codes of the delivery log (openapi.yaml, WebhookDeliveryAttempt.error). */
export type AttemptError = 'timeout' | 'connection_error' | 'redirect_not_followed' | 'http_status' | 'address_not_allowed';

export type PostResult = {
  statusCode: number | null;
  error: AttemptError | null;
  durationMs: number;
  /** At most SNIPPET_CHARS characters from the start of the response body; null when none. */
  snippet: string | null;
};

export const SNIPPET_CHARS = 512;
/** Bytes read from a response at most: a receiver cannot make us buffer more than this. */
export const MAX_RESPONSE_BYTES = 1024;

export type WebhookClient = {
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  close: () => Promise<void>;
};

/**
 * The HTTP client of webhook deliveries: one undici Agent (keep-alive connections per origin)
 * whose sockets resolve names through the checked lookup, so every connection goes to an
 * address that passed the SSRF check. Literal IP hosts, which sockets do not look up, are
 * checked here. Redirects are never followed; the whole attempt (connect, headers, the first
 * bytes of the body) is bounded by `timeoutMs`.
 */
export function createWebhookClient(options: { timeoutMs: number; allowInsecure: boolean; resolve?: Resolver; connections?: number }): WebhookClient {
  const agent = new Agent({
    connect: { lookup: createCheckedLookup(options), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 10_000,
    connections: options.connections ?? 64,
  });

  async function post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const parsed = new URL(url);
    const host = hostOf(parsed);
    if (!options.allowInsecure && (parsed.protocol !== 'https:' || (isIP(host) && !isPublicAddress(host)))) {
      return { statusCode: null, error: 'address_not_allowed', durationMs: elapsed(), snippet: null };
    }
    const signal = AbortSignal.timeout(options.timeoutMs);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(parsed, {
        method: 'POST',
        dispatcher: agent,
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'Loyalty-Webhooks/1.0', ...headers },
        signal,
      });
    } catch (error) {
      return { statusCode: null, error: classify(error, signal), durationMs: elapsed(), snippet: null };
    }
    // The status arrived in time: the body is read only for the log, capped and best effort.
    const snippet = await readSnippet(response.body, signal);
    const status = response.statusCode;
    const error: AttemptError | null = status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect_not_followed' : 'http_status';
    return { statusCode: status, error, durationMs: elapsed(), snippet };
  }

  return { post, close: () => agent.close() };
}

/** Delivered, retried, or final, as the spec's table says. */
export function outcomeOf(result: PostResult): 'delivered' | 'retry' | 'final' {
  const status = result.statusCode;
  if (status === null) return 'retry';
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'final';
  return 'retry';
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy: (error?: Error) => unknown }, signal: AbortSignal): Promise<string | null> {
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
  if (!size) return null;
  const text = Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
  return [...text].slice(0, SNIPPET_CHARS).join('').replace(/\uFFFD+$/, '');
}

function classify(error: unknown, signal: AbortSignal): AttemptError {
  for (let e = error as { code?: string; name?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e instanceof AddressNotAllowedError || e.code === 'ERR_ADDRESS_NOT_ALLOWED') return 'address_not_allowed';
    if (e.code === 'UND_ERR_CONNECT_TIMEOUT' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.name === 'TimeoutError') return 'timeout';
  }
  return signal.aborted ? 'timeout' : 'connection_error';
}
