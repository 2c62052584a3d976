/**
 * Client-side pacing: many concurrent calls wait their turn instead of collecting 429s.
 *
 * The limiter mirrors the server's counter from `X-RateLimit-Remaining`, whatever algorithm the
 * server uses, and never assumes more than it has seen:
 * - A request reserves a unit of the budget before it is sent.
 * - A response whose request was sent after the response the budget came from is newer
 *   information: budget = Remaining minus the requests still in flight (each may yet be counted)
 *   minus those answered while this one was out (the server may have counted them after this
 *   one, yet answered them first). An older response may only lower the budget (responses
 *   arrive out of order).
 * - Budget used up and nothing in flight: hold everyone until one window after the last response
 *   arrived (every window that counted a request we heard about has ended by then), or earlier
 *   when the IETF draft `RateLimit: …;t=<seconds>` field says so, then send one probe to learn the
 *   new Remaining. The window length comes from `RateLimit-Policy: …;w=<seconds>` when sent.
 * - A 429 holds everyone for its `Retry-After`, then probes.
 * - Before the first response, a small burst learns the limit. Responses without the headers
 *   switch pacing off (a server or mock without rate limiting).
 */
import { defined } from './internal/defined.js';
import { parseRetryAfter } from './internal/retry-after.js';

export interface PacingOptions {
  /**
   * Length of the server's rate-limit window when its responses do not state it
   * (`RateLimit-Policy: …;w=`). Default 60 000 (the spec's "per minute").
   */
  windowMs?: number;
  /** Requests sent at once before the first response shows the limit. Default 4. */
  burst?: number;
  /**
   * Called when a call of this client starts waiting for its turn (`waiting: true`) and when it
   * may go (`waiting: false`, with how long it waited): to show that the rate limit, not the
   * server, bounds a long run.
   */
  onWait?: (event: { waiting: boolean; waitedMs: number }) => void;
}

/** A reserved slot; give it back with `settle`. */
export interface Ticket {
  readonly seq: number;
  /** Responses settled before this request was sent. */
  readonly settledBefore: number;
}

interface Waiter {
  resolve(ticket: Ticket): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

const toInt = (value: string | null) => (value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined);

export class RateLimiter {
  /** The server's window, as configured or as its `RateLimit-Policy` states it. */
  windowMs: number;
  readonly burst: number;
  /** X-RateLimit-Limit as last seen. */
  limit: number | undefined;
  #seq = 0;
  #budget: number | undefined;
  #refSeq = 0;
  #lastSeenAt = 0;
  /** Responses to requests after this one belong to the current window or later ones. */
  #epochSeq = 0;
  /** Latest reset time stated (RateLimit t=) in this epoch, rounded up; 0 when none. */
  #resetHint = 0;
  #inFlight = 0;
  /** Requests settled so far (with or without a response). */
  #settled = 0;
  #holdUntil = 0;
  #unpaced = false;
  #queue: Waiter[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = 0;
  /** The last `RateLimit-Policy` seen. */
  #policy: string | null = null;

  constructor(options: PacingOptions = {}) {
    this.windowMs = options.windowMs ?? 60_000;
    this.burst = options.burst ?? 4;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Resolves when a request may be sent; rejects with the signal's reason when aborted first. */
  acquire(signal?: AbortSignal): Promise<Ticket> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const ticket = this.tryAcquire();
    if (ticket) return Promise.resolve(ticket);
    return new Promise<Ticket>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.#queue.indexOf(waiter);
          if (i !== -1) this.#queue.splice(i, 1);
          reject(signal.reason);
          this.#pump();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** A slot at once when one is free and nobody waits, else undefined (then `acquire`). */
  tryAcquire(): Ticket | undefined {
    return this.#queue.length === 0 && this.#canSend(Date.now()) ? this.#take() : undefined;
  }

  /** Returns the slot; feeds the limiter from the response (undefined: no response, e.g. a network error). */
  settle(ticket: Ticket, response: Response | undefined): void {
    this.#inFlight--;
    // A 401 is counted against the caller's IP, not this token: its headers are another budget.
    if (response && response.status !== 401) this.#observe(ticket, response);
    this.#settled++;
    this.#pump();
  }

  #canSend(now: number): boolean {
    if (this.#unpaced) return true;
    if (now < this.#holdUntil) return false;
    if (this.#budget === undefined) return this.#inFlight < (this.limit === undefined ? this.burst : 1);
    return this.#budget > 0;
  }

  #take(): Ticket {
    this.#inFlight++;
    if (this.#budget !== undefined) this.#budget--;
    return { seq: ++this.#seq, settledBefore: this.#settled };
  }

  #observe(ticket: Ticket, response: Response): void {
    const now = Date.now();
    const { headers } = response;
    const limit = toInt(headers.get('x-ratelimit-limit'));
    const remaining = toInt(headers.get('x-ratelimit-remaining'));
    if (limit !== undefined) this.limit = limit;
    const policy = headers.get('ratelimit-policy');
    // A server repeats the same policy on every response: parse it when it changes.
    if (policy !== this.#policy) {
      this.#policy = policy;
      const w = /;\s*w=(\d+)/.exec(policy ?? '');
      if (w) this.windowMs = Number(w[1]) * 1000;
    }
    const t = /;\s*t=(\d+)/.exec(headers.get('ratelimit') ?? '');
    // A whole second more covers a server that rounds the seconds down.
    if (t && ticket.seq > this.#epochSeq) this.#resetHint = Math.max(this.#resetHint, now + Number(t[1]) * 1000 + 1000);
    if (response.status === 429) {
      this.#unpaced = false;
      const after = parseRetryAfter(headers.get('retry-after'), now);
      this.#holdUntil = Math.max(this.#holdUntil, now + (after ?? this.windowMs));
      this.#newEpoch();
      this.#refSeq = this.#seq;
      return;
    }
    if (remaining === undefined) {
      if (this.limit === undefined) this.#unpaced = true;
      return;
    }
    this.#unpaced = false;
    this.#lastSeenAt = now;
    // Requests answered while this one was out may have been counted after it.
    const budget = remaining - this.#inFlight - (this.#settled - ticket.settledBefore);
    if (ticket.seq > this.#refSeq) {
      // Sent after the reference response arrived, so counted after it: newer information.
      this.#refSeq = ++this.#seq;
      this.#budget = budget;
    } else if (this.#budget !== undefined) {
      this.#budget = Math.min(this.#budget, budget);
    }
  }

  /** The window has (or will have, after the hold) reset: learn the budget again with one probe. */
  #newEpoch(): void {
    this.#budget = undefined;
    this.#epochSeq = ++this.#seq;
    this.#resetHint = 0;
  }

  #pump(): void {
    const now = Date.now();
    if (
      !this.#unpaced &&
      this.#budget !== undefined &&
      this.#budget <= 0 &&
      this.#inFlight === 0 &&
      now >= this.#holdUntil
    ) {
      // Used up, and no response on its way to tell us more: wait until the window has reset, then probe.
      let resetAt = this.#lastSeenAt + this.windowMs;
      if (this.#resetHint) resetAt = Math.min(resetAt, this.#resetHint);
      if (now < resetAt) this.#holdUntil = resetAt;
      else this.#newEpoch();
    }
    while (this.#queue.length > 0 && this.#canSend(now)) {
      const waiter = defined(this.#queue.shift(), 'queued waiter');
      const { signal, onAbort } = waiter;
      if (signal && onAbort) signal.removeEventListener('abort', onAbort);
      waiter.resolve(this.#take());
    }
    if (this.#queue.length > 0 && now < this.#holdUntil && this.#timerAt !== this.#holdUntil) {
      clearTimeout(this.#timer);
      this.#timerAt = this.#holdUntil;
      this.#timer = setTimeout(() => {
        this.#timerAt = 0;
        this.#pump();
      }, this.#holdUntil - now);
    }
  }
}

const limiters = new Map<string, RateLimiter>();

/** The last lookup, which the next one nearly always repeats. */
let last: { baseUrl: string; token: string; limiter: RateLimiter } | undefined;

/** The limiter shared by every client of this process that uses the same base URL and token. */
export function limiterFor(baseUrl: string, token: string, options?: PacingOptions): RateLimiter {
  if (last && last.token === token && last.baseUrl === baseUrl) return last.limiter;
  const key = `${baseUrl} ${token}`;
  let limiter = limiters.get(key);
  if (!limiter) {
    if (limiters.size >= 64) {
      // Tokens rotate (client credentials): forget idle limiters of old tokens.
      for (const [k, l] of limiters) if (l.inFlight === 0 && l.queued === 0) limiters.delete(k);
    }
    limiter = new RateLimiter(options);
    limiters.set(key, limiter);
  }
  last = { baseUrl, token, limiter };
  return limiter;
}
