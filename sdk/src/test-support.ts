// What the SDK's tests share: an msw server per test file, the base URL its handlers answer on,
// fresh tokens and fast retries, and the webhook tests' secret, vectors and sample event. For the
// tests only (nothing exports it).
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
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

/**
 * A zip archive of `files` (what a `.pkpass` is), written here so the wallet tests need no zip
 * library: each entry deflated unless `stored`.
 */
export function zipOf(files: Record<string, string | Buffer>, options: { stored?: boolean } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const packed = options.stored ? data : deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(options.stored ? 0 : 8, 8);
    local.writeUInt32LE(crc32(data) >>> 0, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(options.stored ? 0 : 8, 10);
    central.writeUInt32LE(crc32(data) >>> 0, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
