import type { Server } from '@hapi/hapi';

/**
 * Runs `purge` every `everyMs` while the server is started (from onPostStart to onPreStop); a purge
 * that fails (the database is away) is left to the next one. The timer does not hold the process.
 */
export function purgeWhileStarted(server: Server, everyMs: number, purge: () => Promise<unknown>): void {
  let timer: NodeJS.Timeout | undefined;
  server.ext('onPostStart', () => {
    timer = setInterval(() => {
      purge().catch(() => {});
    }, everyMs);
    timer.unref();
  });
  server.ext('onPreStop', () => clearInterval(timer));
}
