// The filters of `loyalty logs tail` and `logs list`, checked here so that a mistake is a usage
// error naming the flag (exit 2) before any request; the server checks them again (422).
import type { paths } from '@loyalty/sdk';
import { usageError } from '../../errors.js';

export interface LogFilterOptions {
  status?: string;
  method?: string;
  path?: string;
  requestId?: string;
  since?: string;
  organization?: string;
}

/** The filters of GET /request-logs, as openapi.yaml defines them. */
export type LogQuery = Pick<
  NonNullable<paths['/request-logs']['get']['parameters']['query']>,
  'status' | 'method' | 'path' | 'request_id' | 'since' | 'organization_id'
>;

type Method = NonNullable<LogQuery['method']>;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const satisfies readonly Method[];
// Every method the document allows is accepted here (a compile error otherwise).
const everyMethod: [Exclude<Method, (typeof METHODS)[number]>] extends [never] ? true : never = true;
void everyMethod;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `10m`, `2h`, `1d`, `30s` before `now`, or an ISO date-time, as ISO. */
export function sinceOf(value: string, now = Date.now()): string {
  const relative = /^(\d{1,6})([smhd])$/.exec(value);
  if (relative) return new Date(now - Number(relative[1]) * (UNIT_MS[relative[2] as string] ?? 0)).toISOString();
  if (/^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]\d\d:\d\d)?)?$/.test(value) && !Number.isNaN(Date.parse(value)))
    return new Date(value).toISOString();
  throw usageError(`--since ${value} is neither a duration (30s, 10m, 2h, 1d) nor an ISO date-time.`);
}

export function logQueryOf(options: LogFilterOptions, now = Date.now()): LogQuery {
  const query: LogQuery = {};
  if (options.status !== undefined) {
    const status = options.status.toLowerCase();
    if (!/^([1-5]xx|[1-5]\d\d)$/.test(status))
      throw usageError(`--status ${options.status} is neither a class (2xx, 4xx, 5xx) nor a status code (404).`);
    query.status = status;
  }
  if (options.method !== undefined) {
    const method = options.method.toUpperCase();
    if (!(METHODS as readonly string[]).includes(method))
      throw usageError(`--method ${options.method} is not one of ${METHODS.join(', ')}.`);
    query.method = method as LogQuery['method'];
  }
  if (options.path !== undefined) {
    if (!/^\/[!-~]{0,199}$/.test(options.path))
      throw usageError(
        `--path ${options.path} is not a route template or its start, like /members or /members/{uuid}.`,
      );
    query.path = options.path;
  }
  if (options.requestId !== undefined) {
    if (!/^[A-Za-z0-9._:+=-]{1,128}$/.test(options.requestId))
      throw usageError(`--request-id ${options.requestId} is not a request id (1 to 128 of A-Z a-z 0-9 . _ : + = -).`);
    query.request_id = options.requestId;
  }
  if (options.since !== undefined) query.since = sinceOf(options.since, now);
  if (options.organization !== undefined) query.organization_id = options.organization;
  return query;
}
