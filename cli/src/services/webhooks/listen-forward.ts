// Forwarding of `loyalty webhooks listen`: one queue per destination URL, so events reach each
// receiver in feed order, a receiver that is down delays only its own events, and printing never
// waits for a forward. Failed forwards are retried like the spec's deliveries (5xx, 408, 429, 3xx,
// timeout and connection error; other 4xx are final), sooner: 1, 2, 4 … 30 s with jitter.
import { setTimeout as sleep } from 'node:timers/promises';
import { signPayload } from '@loyalty/sdk/webhooks';
import type { components } from '@loyalty/sdk';

/** An event of the feed: the document's envelope, one of its event types. */
export type FeedEvent = components['schemas']['Event'];

export const FORWARD_TIMEOUT_MS = 10_000;

export interface AttemptResult {
  status?: number;
  error?: string;
  ms: number;
}

/**
 * delivered: 2xx. rejected: a final 4xx (the resume point passes it). retrying: another attempt follows.
 * failed: retries exhausted (not acknowledged: `--resume` forwards it again). abandoned: stopped first.
 */
export type Outcome = 'delivered' | 'retrying' | 'rejected' | 'failed' | 'abandoned';

export interface ForwardReport extends AttemptResult {
  event: FeedEvent;
  url: string;
  attempt: number;
  attempts: number;
  outcome: Outcome;
  retryInMs?: number;
}

/** Delay before retry or reconnect n (1-based): 1, 2, 4, 8, 16, 30 s, with ±20 % jitter. */
export function backoffDelay(attempt: number, random = Math.random): number {
  const base = Math.min(30_000, 1000 * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** The spec's delivery rules: 4xx other than 408 and 429 is final; anything else but 2xx is worth retrying. */
export function verdict(result: AttemptResult): 'delivered' | 'rejected' | 'retry' {
  const { status } = result;
  if (status === undefined) return 'retry';
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'rejected';
  return 'retry';
}

/** One signed POST: the same message id and body on every attempt, Loyalty-Attempt counting up. */
export async function forwardOnce(
  request: {
    event: FeedEvent;
    body: string;
    url: string;
    secret: string;
    attempt: number;
    headers: Record<string, string>;
  },
  signal: AbortSignal,
): Promise<AttemptResult> {
  const { body, url, secret, attempt } = request;
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        'user-agent': 'loyalty-cli-listen',
        ...request.headers,
        ...signPayload({ body, secret, id: request.event.id, attempt }),
      },
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    });
    // Not awaited: the answer's body is not wanted, and cancelling it can hang (msw's interceptor does).
    void response.body?.cancel().catch(() => undefined);
    return { status: response.status, ms: Date.now() - started };
  } catch (error) {
    const cause = (error as Error & { cause?: NodeJS.ErrnoException }).cause;
    const name = signal.aborted
      ? 'abandoned at stop'
      : (error as Error).name === 'TimeoutError'
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { error: name, ms: Date.now() - started };
  }
}

export interface QueueOptions {
  url: string;
  secret: string;
  headers: Record<string, string>;
  /** Retries after the first attempt. */
  retries: number;
  report: (report: ForwardReport) => void;
  delay?: (retry: number) => number;
  send?: typeof forwardOnce;
}

/** The events bound for one URL, forwarded one at a time in the order they were pushed. */
export class DestinationQueue {
  readonly #options: QueueOptions;
  readonly #waiting: FeedEvent[] = [];
  /** Aborted at Ctrl-C: no new attempt starts, retry waits end. */
  readonly #stopping = new AbortController();
  /** Aborted when the grace period is over: in-flight requests end too. */
  readonly #abandon = new AbortController();
  #running: Promise<void> | undefined;

  constructor(options: QueueOptions) {
    this.#options = options;
  }

  get url(): string {
    return this.#options.url;
  }

  get pending(): number {
    return this.#waiting.length;
  }

  push(event: FeedEvent): void {
    if (this.#stopping.signal.aborted) return;
    this.#waiting.push(event);
    this.#running ??= this.#drain();
  }

  /** Stops after the attempt in flight (or abandons it after `graceMs`); every event not delivered is reported abandoned. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping.abort();
    const timer = setTimeout(() => this.#abandon.abort(), graceMs);
    // Bounded even if a request ignored its abort signal.
    const bound = new AbortController();
    try {
      await Promise.race([
        this.#running,
        sleep(graceMs + 1000, undefined, { signal: bound.signal }).catch(() => undefined),
      ]);
    } finally {
      clearTimeout(timer);
      bound.abort();
    }
    const { url, retries, report } = this.#options;
    for (const event of this.#waiting.splice(0))
      report({ event, url, attempt: 0, attempts: retries + 1, outcome: 'abandoned', ms: 0 });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length && !this.#stopping.signal.aborted) {
        const event = this.#waiting[0] as FeedEvent;
        const settled = await this.#forward(event);
        if (settled) this.#waiting.shift();
      }
    } finally {
      // In the same step as the last check: an event pushed from now on starts a new drain.
      this.#running = undefined;
    }
  }

  /** Attempts until delivered, rejected or out of retries; false when stopped first (the event stays waiting). */
  async #forward(event: FeedEvent): Promise<boolean> {
    const { url, secret, headers, retries, report } = this.#options;
    const send = this.#options.send ?? forwardOnce;
    const delay = this.#options.delay ?? backoffDelay;
    const body = JSON.stringify(event);
    const attempts = retries + 1;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const result = await send({ event, body, url, secret, attempt, headers }, this.#abandon.signal);
      const base = { ...result, event, url, attempt, attempts };
      if (this.#abandon.signal.aborted && result.status === undefined) return false;
      const seen = verdict(result);
      if (seen !== 'retry') {
        report({ ...base, outcome: seen });
        return true;
      }
      if (attempt === attempts) {
        report({ ...base, outcome: 'failed' });
        return true;
      }
      const retryInMs = delay(attempt);
      report({ ...base, outcome: 'retrying', retryInMs });
      const waited = await sleep(retryInMs, true, { signal: this.#stopping.signal }).catch(() => false);
      if (!waited) return false;
    }
    return true;
  }
}
