import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sql } from '../../server/src/db/pool.js';

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
export async function clearWebhookWork(sql: Sql, runner?: { stop: () => Promise<void> }): Promise<void> {
  await runner?.stop();
  await sql`DELETE FROM webhook_subscriptions`;
  await sql`DELETE FROM graphile_worker._private_jobs`;
}
