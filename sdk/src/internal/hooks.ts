/**
 * Hooks and a logger that watch each HTTP request of a call: when it is sent, what answered it, and
 * each retry. They see plain facts (method, path, attempt, times, request id, status), never the
 * request's headers or body, so never the bearer token, a client secret or a member's e-mail (the
 * path holds no query string). A hook that throws (or whose promise rejects) does not change the
 * call: the error is passed to `logger.warn` when there is a logger, and otherwise dropped.
 */

/** One HTTP request of a call, as the hooks see it. */
export interface RequestHookInfo {
  /** `GET`, `POST`, … */
  method: string;
  /** The URL's path, without the query string: `/members/3c9e…/passes`. */
  path: string;
  /** 1 for the first request of the call, 2 for the first retry, … */
  attempt: number;
  /** Time since the call started, waits for retries and for the rate limiter included. */
  elapsedMs: number;
  /** The `X-Request-Id` this request is sent with (request-id.ts). */
  requestId: string;
  /** Time the call has waited so far for a rate-limit slot (client-side pacing). */
  pacingWaitMs: number;
}

/** What answered one request: a status, or none (`status` 0 and `error` tells why). */
export interface ResponseHookInfo extends RequestHookInfo {
  /** The HTTP status; 0 when no response came. */
  status: number;
  /** True when the server answered with the stored result of an earlier request (`Idempotent-Replayed: true`). */
  replayed: boolean;
  /** Why no response came: `network_error` or `timeout`. */
  error?: 'network_error' | 'timeout';
}

/** A retry about to be made, after `delayMs`. */
export interface RetryHookInfo extends ResponseHookInfo {
  delayMs: number;
}

export interface ClientHooks {
  /** Before each request is sent (after any wait for the rate limiter). */
  onRequest?: ((info: RequestHookInfo) => unknown) | undefined;
  /** After each request, with its status (0: no response). */
  onResponse?: ((info: ResponseHookInfo) => unknown) | undefined;
  /** Before the wait of each retry. (To decide against a retry, use `retry.onRetry`.) */
  onRetry?: ((info: RetryHookInfo) => unknown) | undefined;
}

/** Where the client logs: `console` fits, as do pino and winston loggers. */
export interface Logger {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

/**
 * `debug`: every request and response; `info`: each retry; `warn`: a hook that threw; `error`: a
 * call that ended without a response, or with a 5xx. Each level includes the ones after it.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

/** What sendWithRetry reports to; undefined when nobody listens. */
export interface CallObserver {
  request(info: RequestHookInfo): void;
  response(info: ResponseHookInfo): void;
  retry(info: RetryHookInfo): void;
  /** The call's outcome (its last request's). */
  end(info: ResponseHookInfo): void;
}

const levels: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** One observer for the client's hooks, the call's hooks and the logger; undefined when there are none. */
export function callObserver(
  hooks: readonly (ClientHooks | undefined)[],
  logger: Logger | undefined,
  logLevel: LogLevel = 'warn',
): CallObserver | undefined {
  const level = logger ? levels[logLevel] : levels.off;
  const listeners = hooks.filter((h) => h !== undefined);
  if (listeners.length === 0 && level === levels.off) return undefined;
  const fail = (name: string, error: unknown) => {
    if (level <= levels.warn) logger?.warn(`loyalty: the ${name} hook threw; the call goes on`, error);
  };
  const call = <K extends keyof ClientHooks>(name: K, info: Parameters<NonNullable<ClientHooks[K]>>[0]) => {
    for (const h of listeners) {
      try {
        const result = (h[name] as ((i: typeof info) => unknown) | undefined)?.(info);
        if (result instanceof Promise) result.catch((error: unknown) => fail(name, error));
      } catch (error) {
        fail(name, error);
      }
    }
  };
  const line = (i: RequestHookInfo) => `${i.method} ${i.path} attempt ${i.attempt} (request id ${i.requestId})`;
  return {
    request(info) {
      if (level <= levels.debug) logger?.debug(`loyalty: → ${line(info)}`);
      call('onRequest', info);
    },
    response(info) {
      if (level <= levels.debug)
        logger?.debug(`loyalty: ← ${info.status || info.error} ${line(info)} after ${info.elapsedMs} ms`);
      call('onResponse', info);
    },
    retry(info) {
      if (level <= levels.info)
        logger?.info(`loyalty: ${line(info)} got ${info.status || info.error}; retrying in ${info.delayMs} ms`);
      call('onRetry', info);
    },
    end(info) {
      if (level <= levels.error && (info.status === 0 || info.status >= 500))
        logger?.error(
          `loyalty: ${info.method} ${info.path} failed with ${info.status || info.error} (request id ${info.requestId})`,
        );
    },
  };
}
