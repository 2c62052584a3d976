import { Logger as WorkerLogger, type LogLevel as WorkerLogLevel } from './graphile-worker.js';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/** LOYALTY_LOG_LEVEL: pino's levels, and `silent`. */
export const LOG_LEVELS: LevelWithSilent[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Keys whose values never reach a log line, at any of the first levels of a record (a safety net: lines are built from chosen fields). */
const SECRET_KEYS = [
  'authorization',
  'cookie',
  'set-cookie',
  'client_secret',
  'password',
  'secret',
  'token',
  'access_token',
  'refresh_token',
  'email',
];
const REDACT_PATHS = SECRET_KEYS.flatMap((key) => {
  const k = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  const dot = k.startsWith('[') ? '' : '.';
  return [k, `*${dot}${k}`, `*.*${dot}${k}`, `*.*.*${dot}${k}`];
});

/**
 * The server's structured log: one JSON object a line on stdout (pino), through pino-pretty when
 * stdout is a terminal. `destination` (tests): where the JSON lines go instead.
 *
 * `calm` (by default: stdout is a terminal and the level is info): the access lines, warnings and
 * errors only. The worker's job lines and the server's start and stop lines are left out: the start
 * block (lib/start-banner.ts) says what matters. LOYALTY_LOG_LEVEL=debug shows everything.
 */
export function createLogger(
  { level, calm }: { level: string; calm?: boolean },
  destination?: DestinationStream,
): Logger {
  const quiet = calm ?? (!destination && process.stdout.isTTY === true && level === 'info');
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    ...(quiet && {
      hooks: {
        logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void, at: number) {
          if (at < WARN && isChatter(this, args)) return;
          method.apply(this, args);
        },
      },
    }),
  };
  if (destination) return pino(options, destination);
  if (process.stdout.isTTY) return pino(options, terminalStream());
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

/** The access line's fields (plugins/request-log.ts AccessLine; not imported: the scripts' type check would pull in hapi's auth types). */
type AccessFields = { method?: string; route?: string; status?: number; duration_ms?: number; client_id?: string };
/** Said by a terminal line's message (or left out of it): not repeated after it. */
const ACCESS_KEYS = ['method', 'route', 'status', 'duration_ms', 'request_id', 'client_id', 'organization_id'];

/**
 * A terminal's log: one line a record, in this process (synchronous: nothing is lost at exit), an
 * access line as `GET /tags 200 12 ms (acme-admin)`.
 */
function terminalStream(): DestinationStream {
  return pretty({
    destination: 1,
    sync: true,
    singleLine: true,
    ignore: ['pid', 'hostname', ...ACCESS_KEYS].join(','),
    messageFormat: (record, messageKey) => {
      const access = record as AccessFields;
      if (record[messageKey] !== 'request completed' || !access.method) return String(record[messageKey] ?? '');
      const who = access.client_id ? ` (${access.client_id})` : '';
      return `${access.method} ${access.route} ${access.status} ${access.duration_ms} ms${who}`;
    },
  });
}

/** pino's number of the warn level. */
const WARN = 40;

/** A record a calm log leaves out: the worker's (jobs found and completed), hapi's start and stop. */
function isChatter(logger: Logger, args: unknown[]): boolean {
  if ((logger.bindings() as { component?: string }).component === 'worker') return true;
  const message = args.find((arg) => typeof arg === 'string');
  return message === 'server started' || message === 'server stopped';
}

const WORKER_LEVELS: Record<WorkerLogLevel, 'error' | 'warn' | 'info' | 'debug'> = {
  error: 'error',
  warning: 'warn',
  info: 'info',
  debug: 'debug',
};

/**
 * graphile-worker's log through ours: job start (debug, "Found task"), completion (info) and
 * failure (error) with the runner's scope (label, worker, task, job id). Its `meta` (the job row
 * with its payload, the error object) is left out: only the message and the scope are written.
 */
export function workerLoggerOf(logger: Logger, runner?: string): WorkerLogger {
  const base = runner ? logger.child({ component: 'worker', runner }) : logger.child({ component: 'worker' });
  return new WorkerLogger((scope) => {
    const scoped = base.child({
      ...(scope.label && { scope: scope.label }),
      ...(scope.workerId && { worker_id: scope.workerId }),
      ...(scope.taskIdentifier && { task: scope.taskIdentifier }),
      ...(scope.jobId && { job_id: scope.jobId }),
    });
    return (level, message) => scoped[WORKER_LEVELS[level] ?? 'info'](message);
  });
}
