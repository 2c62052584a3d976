// Progress of a long list command on stderr: a line every 2 s, saying when the calls are waiting
// for the per-token rate limit rather than for the server.
import type { Context } from '../../context.js';
import { pacingNote } from '../../pacing.js';

/** Chunks in flight at once for list commands (the SDK's pacing spreads them further). */
export const BULK_CONCURRENCY = 3;
const EVERY_MS = 2000;

/** Prints `line(note)` every 2 s until stopped; `note` is ", waiting for the rate limit for 12 s" or "". */
export function bulkProgress(ctx: Context, line: (note: string) => string): { stop(): void } {
  const timer = setInterval(() => {
    const note = pacingNote();
    ctx.output.info(line(note ? `, ${note}` : ''));
  }, EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
