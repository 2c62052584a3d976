/**
 * Streamed responses at once per key (unpaged member lists and exports; the key is the token's
 * client, so all tokens of one client share its slots). A stream holds no database connection
 * while its reader is slow, but it does hold memory (services/members/members-list.ts,
 * STREAM_BUFFER_BYTES and a chunk) and a chunk query's turn; one client may not take them all.
 * Counted per process.
 */
export type StreamSlots = {
  /** A slot for `key`, with the function that gives it back (call it once), or null when all are taken. */
  acquire: (key: string) => (() => void) | null;
};

export function createStreamSlots(perKey: number): StreamSlots {
  const inUse = new Map<string, number>();
  return {
    acquire(key) {
      const used = inUse.get(key) ?? 0;
      if (used >= perKey) return null;
      inUse.set(key, used + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (inUse.get(key) ?? 1) - 1;
        if (left > 0) inUse.set(key, left);
        else inUse.delete(key);
      };
    },
  };
}
