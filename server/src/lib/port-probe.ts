import { createServer } from 'node:net';

/**
 * A port in use, or an address this machine does not have, stops a start before the database
 * starts: the error is the one `listen` gives (its `syscall`, `address` and `port` name it in the
 * start's one line, startup-errors.ts), in under a second, where it used to come after initdb and
 * the migrations (30 s on a loaded machine). The server's own listen still catches a port taken
 * in between. PORT=0 picks a free port then: nothing to check.
 */
export async function requirePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
