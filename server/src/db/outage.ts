/** Node's errors of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
/** postgres.js's own codes of a connection that is gone or never came. */
const DRIVER_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);
/**
 * SQLSTATEs of a server that is shutting down, starting, or restarting after a crash (57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now); class 08 is a connection exception.
 */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03']);

type ErrorWithCode = { code?: unknown; syscall?: unknown };

/**
 * Whether an error says PostgreSQL cannot be reached (stopped, restarting, network gone), as opposed
 * to a query that failed: an expected state that a retry after a while resolves, not a bug.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as ErrorWithCode;
  if (typeof code !== 'string') return false;
  if (NETWORK_CODES.has(code) || DRIVER_CODES.has(code) || SERVER_STATES.has(code)) return true;
  if (code === 'ENOENT' && syscall === 'connect') return true; // a Unix socket whose server is gone
  return /^08[0-9A-Z]{3}$/.test(code);
}

/** A short description of why the database cannot be reached, for one log line. */
export function describeDatabaseError(error: unknown): string {
  const e = (error ?? {}) as ErrorWithCode & { message?: unknown };
  const message = typeof e.message === 'string' ? e.message.replace(/\s*\n\s*/g, ' ') : String(error);
  return typeof e.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

export type DatabaseOutage = {
  /**
   * An error that says the database is unreachable: logged when an outage starts, not again until
   * it ends; `probe` (e.g. `SELECT 1` on the pool that failed) tells when it is back.
   */
  report: (error: unknown, probe: () => Promise<unknown>) => void;
  readonly down: boolean;
  stop: () => void;
};

/**
 * Tracks an outage of the database so that it is logged once, not once per failing request: the
 * first failure logs a line and starts probing (every `probeIntervalMs`); the first probe that
 * succeeds logs that the database is back. The pools reconnect by themselves; nothing restarts.
 */
export function createDatabaseOutage(log: (line: string) => void, probeIntervalMs = 1000): DatabaseOutage {
  let down = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const probeUntilBack = (probe: () => Promise<unknown>) => {
    timer = setTimeout(() => {
      Promise.resolve()
        .then(probe)
        .then(
          () => {
            down = false;
            log('loyalty: database is reachable again; serving requests');
          },
          () => {
            if (!stopped) probeUntilBack(probe);
          },
        );
    }, probeIntervalMs);
    timer.unref();
  };
  return {
    report(error, probe) {
      if (down || stopped) return;
      down = true;
      log(
        `loyalty: database unavailable (${describeDatabaseError(error)}); answering 503 with Retry-After until it is back`,
      );
      probeUntilBack(probe);
    },
    get down() {
      return down;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
