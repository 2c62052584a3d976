// What the SDK's tests share: an msw server per test file, the base URL its handlers answer on,
// fresh tokens and fast retries. For the tests only (nothing exports it).
import { setupServer, type SetupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createLoyaltyClient, type LoyaltyClient } from './client.js';
import type { RetryOptions } from './retry.js';

/** The base URL of the tests' msw handlers. */
export const api = 'http://api.test';

/** Four attempts a few milliseconds apart, within five seconds. */
export const fast: RetryOptions = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, deadlineMs: 5_000 };

/**
 * An msw server for the test file: listening from the first test on (a request no handler answers
 * fails the test), the handlers a test added removed after it, closed after the last test.
 */
export function mswServer(): SetupServer {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return server;
}

/** `<prefix>-1`, `<prefix>-2`, …: a fresh token per test keeps the process-wide rate limiters apart. */
export function tokens(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}-${++n}`;
}

/** A client on `baseUrl` with a fresh token (see `tokens`) at each call. */
export function clients(prefix: string, retry: RetryOptions | false, baseUrl = api): () => LoyaltyClient {
  const token = tokens(prefix);
  return () => createLoyaltyClient({ baseUrl, token: token(), retry });
}
