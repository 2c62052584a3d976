import Hapi, { type Plugin, type Server } from '@hapi/hapi';

/** A bare hapi server on 127.0.0.1 with one plugin registered, not started. */
export async function pluginServer<T>(plugin: Plugin<T>, options: T): Promise<Server> {
  const server = Hapi.server({ port: 0, host: '127.0.0.1' });
  await server.register({ plugin, options });
  return server;
}

/**
 * Starts the server, waits up to 2 s for `remaining()` to reach 0 (a purge timer's work) and
 * stops it again; what `remaining()` answers then.
 */
export async function remainingAfterStart(server: Server, remaining: () => Promise<number>): Promise<number> {
  await server.start();
  try {
    for (let i = 0; i < 100 && (await remaining()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    return await remaining();
  } finally {
    await server.stop();
  }
}
