// An import reads its input twice (check, then send). A file is simply opened again; stdin is
// copied, while the first pass reads it, to a temporary file readable by its owner only (the rows
// are personal data), which is removed when the import ends however it ends.
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Chunks = AsyncIterable<Buffer | string>;

export interface Rereadable {
  /** The first reading. */
  first: Chunks;
  /** Another reading from the start (after the first has ended). */
  again(): Promise<Chunks>;
  /** Removes the copy of stdin, if one was made. */
  dispose(): Promise<void>;
}

export async function rereadable(chunks: Chunks, reopen?: () => Promise<Chunks>): Promise<Rereadable> {
  if (reopen) return { first: chunks, again: reopen, dispose: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), 'loyalty-import-'));
  const path = join(dir, 'input');
  const handle = await open(path, 'w', 0o600);
  let copied = false;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= handle.close();
    return closed;
  };
  async function* copying(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of chunks) {
        const buffer = Buffer.from(chunk);
        await handle.write(buffer);
        yield buffer;
      }
      copied = true;
    } finally {
      await close();
    }
  }
  return {
    first: copying(),
    again: async () => {
      if (!copied) throw new Error('Internal error: the input is read again before its first reading ended');
      return createReadStream(path, { highWaterMark: 256 * 1024 });
    },
    // A first reading that stopped early (a file that cannot be read) may never finish its generator.
    dispose: async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
