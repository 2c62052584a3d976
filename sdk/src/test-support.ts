// What the SDK's tests share: an msw server per test file, the base URL its handlers answer on,
// fresh tokens and fast retries, and the webhook tests' secret, vectors and sample event. For the
// tests only (nothing exports it).
import { readFileSync } from 'node:fs';
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

/** The webhook tests' secret (Standard Webhooks form: 32 bytes after `whsec_`). */
export const WEBHOOK_SECRET = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';

export interface WebhookVector {
  name: string;
  secrets: string[];
  body: string;
  headers: Record<string, string>;
}

/** fixtures/webhook-vectors.json: bodies, their secrets and the headers the server signs them with. */
export const webhookVectors: WebhookVector[] = JSON.parse(
  readFileSync(new URL('../../fixtures/webhook-vectors.json', import.meta.url), 'utf8'),
).vectors;

/** A `points.changed` envelope: the webhook tests' sample delivery. */
export const pointsChangedEvent = {
  id: '6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
  type: 'points.changed',
  created_at: '2026-11-21T10:15:30.000Z',
  organization_id: 'org-acme',
  data: {
    member_id: 'm',
    storecard_id: 'card-points',
    pass_id: 'p',
    type: 'earn',
    points: 5,
    balance: 25,
    reference: 'till-1-0042',
  },
};
