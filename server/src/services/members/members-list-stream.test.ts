import { describe, expect, it } from 'vitest';
import { STREAM_BUFFER_BYTES, streamJsonChunks } from './members-list.js';

// A streamed list whose reader takes nothing keeps a bounded number of bytes in the process: the
// next chunk is fetched only once the buffered ones drained (issue 25, finding 4: stalled streams
// pinned ~3.7 MB each outside the heap cap).

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('streamJsonChunks', () => {
  it('fetches at most STREAM_BUFFER_BYTES and one chunk ahead of a reader that reads nothing', async () => {
    const piece = Buffer.alloc(100_000, 'a');
    let produced = 0;
    const out = await streamJsonChunks({
      head: '[',
      tail: ']',
      chunk: async (after) => {
        produced += piece.length;
        return { items: piece, next: String(Number(after) + 1) };
      },
    });
    await settle();
    expect(produced).toBeGreaterThan(0);
    expect(produced).toBeLessThanOrEqual(STREAM_BUFFER_BYTES + piece.length);
    // Reading resumes the fetching, still within the bound ahead of what was read.
    let read = 0;
    for (let i = 0; i < 20; i++) {
      const got = out.read() as Buffer | null;
      if (got) read += got.length;
      else await settle();
    }
    expect(read).toBeGreaterThan(STREAM_BUFFER_BYTES);
    await settle();
    expect(produced - read).toBeLessThanOrEqual(STREAM_BUFFER_BYTES + piece.length);
    out.destroy();
  });

  it('ends with head, the items joined by commas, and tail', async () => {
    const pieces = ['1', '2,3', '4'].map((s) => Buffer.from(s));
    const out = await streamJsonChunks({
      head: '[',
      tail: ']',
      chunk: async (after) => {
        const i = Number(after);
        return i < pieces.length ? { items: pieces[i]!, next: String(i + 1) } : null;
      },
    });
    const parts: Buffer[] = [];
    for await (const part of out) parts.push(part as Buffer);
    expect(JSON.parse(Buffer.concat(parts).toString())).toEqual([1, 2, 3, 4]);
  });

  it('fetches no further chunk once the stream is destroyed (the route does so when the client goes)', async () => {
    const piece = Buffer.alloc(1000, 'a');
    let fetched = 0;
    const out = await streamJsonChunks({
      head: '[',
      tail: ']',
      chunk: async (after) => {
        fetched++;
        return { items: piece, next: String(Number(after) + 1) };
      },
    });
    // Read some, as a client would, then go away mid-stream.
    let read = 0;
    for await (const part of out) {
      read += (part as Buffer).length;
      if (read > 10_000) break; // ends the iteration: destroys the stream
    }
    expect(out.destroyed).toBe(true);
    await settle();
    const atDestroy = fetched;
    await settle();
    expect(fetched).toBe(atDestroy);
    // At most the chunk in flight when it was destroyed, beyond what the buffers held.
    expect(fetched * piece.length).toBeLessThanOrEqual(read + STREAM_BUFFER_BYTES + 2 * piece.length);
  });
});
