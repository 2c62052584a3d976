// Lists given as arguments and files (stdin for -), read line by line and sent in chunks with a
// few chunks in flight: a file of any length is handled with flat memory. Reading waits while
// the chunks in flight are full, so nothing piles up however slow the API is.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { Context } from '../../context.js';
import { openInput } from './inputs.js';

export interface InputLine {
  /** 1-based, counting the arguments first and then the file's lines. */
  line: number;
  text: string;
}

/** The arguments, then the file's lines as they are read. */
export async function* inputLines(ctx: Context, args: readonly string[], file?: string): AsyncGenerator<InputLine> {
  let line = 0;
  for (const text of args) yield { line: ++line, text };
  if (!file) return;
  const lines = createInterface({
    input: Readable.from(await openInput(ctx, file)),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const text of lines) yield { line: ++line, text };
}

/** Items in chunks of at most `size`. */
export async function* chunked<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let chunk: T[] = [];
  for await (const item of items) {
    chunk.push(item);
    if (chunk.length >= size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * Runs `send` on each chunk, at most `concurrency` at once, taking the next chunk only when one
 * has finished. Stops taking chunks on abort; resolves once the chunks in flight have ended.
 */
export async function forEachChunk<T>(
  chunks: AsyncIterable<T>,
  concurrency: number,
  signal: AbortSignal,
  send: (chunk: T, index: number) => Promise<void>,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let index = 0;
  for await (const chunk of chunks) {
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (signal.aborted || failure) break;
    const sending: Promise<void> = send(chunk, index++)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
}
