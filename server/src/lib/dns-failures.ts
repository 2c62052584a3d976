import type { LookupAddress } from 'node:dns';
import type { Resolver } from './ssrf.js';

/** How long a name that did not resolve keeps failing at once, without asking DNS again. */
export const DNS_FAILURE_TTL_MS = 30_000;

/**
 * A resolver for webhook deliveries that fails fast on names that do not resolve (issue 11: a
 * receiver with an unresolvable host made every attempt wait for DNS). Concurrent lookups of one
 * name share one query, and a failure is remembered for `ttlMs`: a dead host costs one lookup
 * per TTL, not one per attempt, and cannot fill libuv's small thread pool with hanging lookups.
 * Answers that resolve are not cached (the system resolver and the OS cache keep their TTLs).
 */
export function failFastResolver(resolve: Resolver, { ttlMs = DNS_FAILURE_TTL_MS, now = Date.now } = {}): Resolver {
  const failures = new Map<string, { error: NodeJS.ErrnoException; until: number }>();
  const inFlight = new Map<string, ((error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void)[]>();
  return (hostname, options, callback) => {
    const key = `${options.family ?? 0} ${hostname.toLowerCase()}`;
    const failed = failures.get(key);
    if (failed && failed.until > now()) return queueMicrotask(() => callback(failed.error, []));
    failures.delete(key);
    const waiting = inFlight.get(key);
    if (waiting) return void waiting.push(callback);
    inFlight.set(key, [callback]);
    resolve(hostname, options, (error, addresses) => {
      const callbacks = inFlight.get(key) ?? [];
      inFlight.delete(key);
      if (error) failures.set(key, { error, until: now() + ttlMs });
      for (const cb of callbacks) cb(error, addresses);
    });
  };
}
