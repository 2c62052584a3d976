/**
 * `streamMembers`: every member of a brand from one unpaged `POST /members/list`, read as it
 * arrives. The server streams the whole list in one response; the body is parsed incrementally
 * (`internal/list-body-scanner.ts`), so memory stays flat at any size and a million members take
 * about as long as the server takes to send them. Pages (`iterateMembers` with `perPage`) cost a
 * request per page instead.
 */
import type { ClientOfPaths } from './client.js';
import { LoyaltyError, toLoyaltyError } from './errors.js';
import type { components } from './generated/openapi.js';
import { ListBodyScanner, ListBodySyntaxError } from './internal/list-body-scanner.js';
import { requestIdOf } from './request-id.js';

type MemberListItem = components['schemas']['MemberListItem'];

export interface MemberStreamOptions {
  brandId: string;
  /** Stops the list: the request, or the body being read (the iteration then throws the signal's reason). */
  signal?: AbortSignal;
}

export interface MemberStream extends AsyncIterable<MemberListItem> {
  /**
   * The same members, one array per piece of the body as it arrives (none empty): for a consumer
   * that handles members in bulk, without one async step per member (a CSV writer, a database
   * copy). Iterate either the stream or its batches, once.
   */
  batches(): AsyncIterable<MemberListItem[]>;
  /**
   * The brand's member count when the list started (the envelope's `total`): known once the first
   * chunk has arrived, before the first member is yielded; undefined until then. Members who join
   * later are not in the list, and one who leaves while it streams may be missing from it, so
   * the count of members yielded can end below `total`.
   */
  readonly total: number | undefined;
}

/**
 * Every member of a brand, in the list's order (joined first, first), from one unpaged
 * `POST /members/list` whose body is parsed as it arrives. The request goes through the client
 * (auth, retries of the request until its response starts, rate-limit pacing, request ids);
 * a failure after the response started is not retried: the iteration throws a `LoyaltyError`
 * with code `stream_interrupted` (the connection broke, or the body ended before the end of
 * the list) or `invalid_response` (the body is not the list's JSON). A list never ends short
 * without an error.
 *
 *     const members = streamMembers(client, { brandId: 'brand-acme' });
 *     for await (const member of members) console.log(member.email, 'of', members.total);
 */
export function streamMembers(client: ClientOfPaths, options: MemberStreamOptions): MemberStream {
  let total: number | undefined;
  async function* batches(): AsyncGenerator<MemberListItem[], void, undefined> {
    const { signal } = options;
    const result = await client.POST('/members/list', {
      body: { brand_id: options.brandId },
      signal,
      parseAs: 'stream',
    });
    const failed = toLoyaltyError(result);
    if (failed) throw failed;
    const { response } = result;
    const fail = (code: string, message: string, cause?: unknown) =>
      new LoyaltyError({ status: response.status, code, message, response, cause, requestId: requestIdOf(response) });
    if (!result.data) throw fail('invalid_response', 'Empty response body');
    const reader = result.data.getReader();
    // After the response headers the client's signal no longer reaches the body: cancel it here.
    const stop = () => reader.cancel(signal?.reason).catch(() => {});
    signal?.addEventListener('abort', stop, { once: true });
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const scanner = new ListBodyScanner(['data', 'members']);
    const parse = <T>(step: () => T): T => {
      try {
        return step();
      } catch (error) {
        if (error instanceof ListBodySyntaxError)
          throw fail(
            error.truncated ? 'stream_interrupted' : 'invalid_response',
            `The member list ${error.truncated ? 'was cut short' : 'is not valid'}: ${error.message}`,
            error,
          );
        if (error instanceof TypeError) throw fail('invalid_response', `The member list is not UTF-8 text`, error);
        throw error;
      }
    };
    let done = false;
    try {
      for (;;) {
        signal?.throwIfAborted();
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          signal?.throwIfAborted();
          throw fail('stream_interrupted', 'The member list was cut short: the connection broke', error);
        }
        signal?.throwIfAborted();
        if (chunk.done) break;
        const value = chunk.value;
        const items = parse(() => scanner.push(decoder.decode(value, { stream: true })));
        if (total === undefined) total = parse(() => totalOf(scanner.envelopeHead()));
        if (items.length > 0) yield items as MemberListItem[];
      }
      parse(() => {
        try {
          scanner.push(decoder.decode());
        } catch (error) {
          scanner.end(); // a body cut inside a character and the list: cut short, not invalid
          throw error;
        }
        scanner.end();
      });
      done = true;
    } finally {
      signal?.removeEventListener('abort', stop);
      // Stopped early (an error, a `break`, an abort): let the connection go (not awaited: a
      // body's cancel may wait on its source).
      if (!done) stop();
    }
  }
  async function* members(): AsyncGenerator<MemberListItem, void, undefined> {
    for await (const batch of batches()) yield* batch;
  }
  return {
    get total() {
      return total;
    },
    batches,
    [Symbol.asyncIterator]: members,
  };
}

function totalOf(head: unknown): number | undefined {
  const value = (head as { data?: { total?: unknown } } | undefined)?.data?.total;
  return typeof value === 'number' ? value : undefined;
}
