// Whether this process's API calls are waiting for the per-token rate limit (the SDK paces calls
// to stay within it): long bulk commands show it, so that a slow run is seen to be bounded by the
// limit (600 requests a minute per token, 2000 rows a request), not by the server.
export interface PacingState {
  /** Calls waiting for their turn now. */
  waiting: number;
  /** Time any call spent waiting, summed over calls. */
  waitedMs: number;
  /** Since when at least one call has been waiting (0: none waits). */
  waitingSince: number;
}

export const pacing: PacingState = { waiting: 0, waitedMs: 0, waitingSince: 0 };

const listeners = new Set<() => void>();

/** The SDK's `pacing.onWait`. */
export function onPacingWait(event: { waiting: boolean; waitedMs: number }): void {
  if (event.waiting) {
    if (pacing.waiting++ === 0) pacing.waitingSince = Date.now();
  } else {
    pacing.waiting = Math.max(0, pacing.waiting - 1);
    pacing.waitedMs += event.waitedMs;
    if (pacing.waiting === 0) pacing.waitingSince = 0;
  }
  for (const listener of listeners) listener();
}

/** Calls `listener` whenever a call starts or stops waiting; returns the unsubscribe. */
export function watchPacing(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** "waiting for the rate limit for 12 s" while calls wait, else undefined. */
export function pacingNote(now = Date.now()): string | undefined {
  if (pacing.waiting === 0) return undefined;
  const seconds = Math.round((now - pacing.waitingSince) / 1000);
  return `waiting for the rate limit${seconds >= 1 ? ` for ${seconds} s` : ''}`;
}
