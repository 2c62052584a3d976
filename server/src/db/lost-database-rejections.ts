import { describeDatabaseError, isDatabaseUnavailable } from './outage.js';

/** At most one line per this many milliseconds: an outage rejects many such promises at once. */
const QUIET_MS = 10_000;

/**
 * graphile-worker leaves a promise of a batch of job outcomes rejected and unhandled when the
 * database goes away while it is being written (kill -9 of PostgreSQL, a failover), and Node ends
 * the process on an unhandled rejection: the whole server died of an outage it answers with 503.
 * Such a rejection is logged (one line per 10 s) and the process carries on; the supervised
 * runners start again (worker-supervisor.ts) and the stall check frees their jobs. Any other
 * unhandled rejection still ends the process, as Node's default does.
 */
export function surviveLostDatabaseRejections(log: (line: string) => void = (line) => console.error(line)): void {
  let lastLogged = 0;
  process.on('unhandledRejection', (reason) => {
    if (!isDatabaseUnavailable(reason)) throw reason;
    if (Date.now() - lastLogged < QUIET_MS) return;
    lastLogged = Date.now();
    log(
      `loyalty: background work lost its database connection (${describeDatabaseError(reason)}); it is retried once the database is back`,
    );
  });
}
