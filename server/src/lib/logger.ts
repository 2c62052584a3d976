import { Logger as WorkerLogger, type LogLevel as WorkerLogLevel } from './graphile-worker.js';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

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
 */
export function createLogger({ level }: { level: string }, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  if (destination) return pino(options, destination);
  if (process.stdout.isTTY)
    return pino({ ...options, transport: { target: 'pino-pretty', options: { destination: 1 } } });
  return pino(options, pino.destination({ dest: 1, sync: true }));
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
