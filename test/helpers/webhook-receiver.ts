import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Sql } from '../../server/src/db/pool.js';
import { recordEvents } from '../../server/src/services/webhooks/events.js';
import { createTestServer, type TestServer } from './server.js';

/** An HTTP server on 127.0.0.1 that webhook deliveries of a test are sent to. */
export type Receiver = { server: Server; port: number; base: string; close: () => Promise<void> };

export async function startReceiver(listener: RequestListener): Promise<Receiver> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Between tests: the test's worker stopped, and no subscriptions or queued jobs of the tests before. */
type Runner = { stop: () => Promise<void> };

export async function clearWebhookWork(sql: Sql, runner?: Runner): Promise<void> {
  await runner?.stop();
  await sql`DELETE FROM webhook_subscriptions`;
  await sql`DELETE FROM graphile_worker._private_jobs`;
}

/**
 * A file's webhook test bed: a test server and a receiver answering with `listener`, started before
 * its tests and handed to `ready`; after each test, the worker the test started with `run` stopped
 * and the webhook work cleared (clearWebhookWork); both closed after all tests.
 */
export function useWebhookTestBed(
  listener: RequestListener,
  ready: (bed: { t: TestServer; receiver: Receiver }) => void,
): { run: <R extends Runner>(start: () => Promise<R>) => Promise<R> } {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  let runner: Runner | undefined;
  beforeAll(async () => {
    t = await createTestServer();
    receiver = await startReceiver(listener);
    ready({ t, receiver });
  });
  afterEach(async () => {
    if (t) await clearWebhookWork(t.db.sql, runner);
    runner = undefined;
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });
  return {
    run: async (start) => {
      const started = await start();
      runner = started;
      return started;
    },
  };
}

/**
 * POST /webhook-subscriptions as `clientId` (answered 201): the subscription's id and its secret
 * (shown once).
 */
export async function subscribeWebhook(
  t: TestServer,
  url: string,
  events = ['member.created'],
  clientId = 'acme-admin',
): Promise<{ id: string; secret: string }> {
  const res = await t.inject({
    method: 'POST',
    url: '/webhook-subscriptions',
    payload: { url, events },
    headers: await t.auth(clientId),
  });
  expect(res.statusCode, res.payload).toBe(201);
  return (res.result as { data: { id: string; secret: string } }).data;
}

/** `n` member.created events of org-acme through the outbox, as the server records them; their ids. */
export function emitMemberCreated(t: TestServer, n = 1): Promise<string[]> {
  return t.db.sql.begin((tx) =>
    recordEvents(
      tx,
      Array.from({ length: n }, () => ({
        organizationId: 'org-acme',
        type: 'member.created' as const,
        data: { member_id: crypto.randomUUID(), brand_id: 'brand-acme' },
      })),
    ),
  );
}
