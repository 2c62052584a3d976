// The request ids of a run's API calls (the SDK sends one per request, the server answers with the
// id it logged): the last one is quoted in an unexpected-error message, and with --debug every
// request is printed to stderr as method, path, status and request id (never headers, query
// strings or bodies: they may hold tokens, secrets or personal data).
import type { Output } from './output.js';
import type { Runtime } from './runtime.js';

export type FetchLike = (request: Request) => Promise<Response>;

const lastIds = new WeakMap<Runtime, string>();

/** The request id of the run's latest API request, if it made one. */
export function lastRequestId(runtime: Runtime): string | undefined {
  return lastIds.get(runtime);
}

/** A request id as shown in messages: ` (request id: …)`, or nothing when unknown. */
export function requestIdSuffix(id: string | undefined): string {
  return id ? ` (request id: ${id})` : '';
}

/**
 * `inner` (default: the global fetch, looked up per request), noting each request's id for the
 * run, and with `debug` printing a line per request: `[debug] GET /tags -> 200 (request id: …, 12 ms)`.
 */
export function observedFetch(runtime: Runtime, debug: Output | undefined, inner?: FetchLike): FetchLike {
  const send: FetchLike = inner ?? ((request) => globalThis.fetch(request));
  return async (request) => {
    const sent = request.headers.get('x-request-id') ?? undefined;
    if (sent) lastIds.set(runtime, sent);
    const started = Date.now();
    const line = (outcome: string, id: string | undefined) =>
      debug?.info(
        debug.err.dim(
          `[debug] ${request.method} ${new URL(request.url).pathname} -> ${outcome}${id ? ` (request id: ${id}, ${Date.now() - started} ms)` : ` (${Date.now() - started} ms)`}`,
        ),
      );
    let response: Response;
    try {
      response = await send(request);
    } catch (error) {
      line(
        `no response: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`,
        sent,
      );
      throw error;
    }
    const id = response.headers.get('x-request-id') ?? sent;
    if (id) lastIds.set(runtime, id);
    line(String(response.status), id);
    return response;
  };
}
