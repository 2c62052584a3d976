// What the CLI does when an API call is about to be retried (the SDK's `retry.onRetry`). A refused
// connection to this machine before the API has answered anything in this run is a server that
// is not running: the call fails at once ("Cannot reach the API at …") instead of after seconds of
// silent retries. Every other retry (5xx, 429, timeouts, a refused connection once the server has
// answered, as while it restarts mid-import) is made, and said at once on stderr: what happened,
// the wait, the attempt. While a live progress view owns stderr, the line is shown in the view.
import type { RetryNotice } from '@loyalty/sdk';

/** Host names of this machine. */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Whether a URL points at this machine. */
export const isThisMachine = (url: string): boolean => LOOPBACK.test(new URL(url).hostname);

/** The system error code (ECONNREFUSED, ENOTFOUND…) under a network error, if any. */
export function systemErrorCode(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    const code = (at as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

const wait = (ms: number): string =>
  ms < 50 ? 'now' : `in ${ms < 950 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;

export interface RetryReporting {
  apiUrl: string;
  /** Whether any API call of this run has had an answer. */
  answered: () => boolean;
  /** Says a line on stderr. */
  say: (line: string, delayMs: number) => void;
}

/** The line that says a retry is coming, or undefined for one that is not worth a word (409 in progress). */
export function retryLine(notice: RetryNotice, apiUrl: string): string | undefined {
  const next = `retrying ${wait(notice.delayMs)} (attempt ${notice.attempt + 1} of ${notice.maxAttempts})`;
  if (notice.error) {
    const code = systemErrorCode(notice.error);
    const what =
      notice.error.code === 'timeout'
        ? `The API at ${apiUrl} did not answer in time`
        : `Cannot reach the API at ${apiUrl}${code ? ` (${code})` : ''}`;
    return `${what}; ${next}…`;
  }
  if (notice.status === 409) return undefined;
  if (notice.status === 429) return `The API's rate limit was reached (429); ${next}…`;
  return `The API answered ${notice.status}; ${next}…`;
}

export function onApiRetry(reporting: RetryReporting): (notice: RetryNotice) => boolean {
  return (notice) => {
    const refused = notice.error && systemErrorCode(notice.error) === 'ECONNREFUSED';
    if (refused && !reporting.answered() && isThisMachine(notice.url)) return false;
    const line = retryLine(notice, reporting.apiUrl);
    if (line) reporting.say(line, notice.delayMs);
    return true;
  };
}

/** The retry being waited for, for a live view to show (it cannot have lines written under it). */
let current: { line: string; until: number } | undefined;
const listeners = new Set<() => void>();

export function noteRetry(line: string, delayMs: number): void {
  current = { line, until: Date.now() + delayMs };
  for (const listener of listeners) listener();
}

/** The retry being waited for now, if any. */
export function retryNote(now = Date.now()): string | undefined {
  return current && now <= current.until + 1000 ? current.line : undefined;
}

/** Calls `listener` when a retry starts; returns the unsubscribe. */
export function watchRetries(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
