// `loyalty logs tail` and `logs list`: the organization's request log (GET /request-logs).
// tail follows it like `stripe logs tail`: it marks "now" (or --since) and long-polls for newer
// entries, printing each as it comes; a dropped connection is reported and resumed from the last
// cursor, so no entry is missed. Ctrl-C ends it (exit 130, as `webhooks listen`).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '../../context.js';
import { CliError, ExitCode, usageError } from '../../errors.js';
import { call } from '../common/api.js';
import { isTransient, reconnectDelay } from '../webhooks/listen.js';
import { type LogFilterOptions, type LogQuery, logQueryOf } from './logs-filters.js';
import { logLine, printEntry } from './logs-print.js';

export interface TailOptions extends LogFilterOptions {
  wait: string;
}

export interface ListOptions extends LogFilterOptions {
  limit?: string;
  cursor?: string;
}

/** The cursor before every entry: with --since, tail starts from the oldest entry at or after it. */
const FIRST_CURSOR = '0.0';

const page = (
  ctx: Context,
  query: LogQuery & { after?: string; cursor?: string; wait?: number; limit?: number },
  client = ctx.client(),
) => call(ctx, (api, signal) => api.GET('/request-logs', { params: { query }, signal }), { client });

export async function tail(ctx: Context, options: TailOptions): Promise<void> {
  const { output } = ctx;
  const filters = logQueryOf(options);
  const wait = Number(options.wait);
  if (!Number.isInteger(wait) || wait < 1 || wait > 30) throw usageError('--wait must be 1 to 30 seconds.');
  // No SDK retries: the loop reports every drop and reconnect itself.
  const client = ctx.client({ retry: false, timeoutMs: (wait + 15) * 1000 });
  let cursor = filters.since ? FIRST_CURSOR : undefined;
  let failures = 0;
  while (!ctx.signal.aborted) {
    try {
      if (cursor === undefined) {
        cursor = (await page(ctx, { ...filters, limit: 1 }, client)).follow_cursor;
        output.success(`Tailing the request log of ${ctx.apiUrl}${describe(filters)}. Ctrl-C to stop.`);
        continue;
      }
      const answer = await page(ctx, { ...filters, after: cursor, wait, limit: 100 }, client);
      if (failures > 0) output.success(output.err.green(`Reconnected to ${ctx.apiUrl}; no entry missed.`));
      failures = 0;
      for (const entry of answer.data) printEntry(output, entry);
      cursor = answer.next_cursor ?? cursor;
    } catch (error) {
      if (ctx.signal.aborted) break;
      if (!isTransient(error)) throw error;
      failures += 1;
      const delay = reconnectDelay(failures);
      output.error(
        output.err.red(`Connection to the request log lost: ${error instanceof Error ? error.message : String(error)}`),
      );
      output.info(output.err.yellow(`  Reconnecting in ${(delay / 1000).toFixed(0)} s (attempt ${failures})…`));
      await sleep(delay, undefined, { signal: ctx.signal }).catch(() => undefined);
    }
  }
  output.info('Stopped tailing.');
  throw new CliError('', { exitCode: ExitCode.interrupted });
}

export async function list(ctx: Context, options: ListOptions): Promise<void> {
  const limit = options.limit === undefined ? undefined : Number(options.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100))
    throw usageError('--limit must be 1 to 100.');
  if (options.cursor !== undefined && !/^\d{1,20}\.\d{1,20}$/.test(options.cursor))
    throw usageError(`--cursor ${options.cursor} is not a cursor of the request log (the next_cursor of a page).`);
  const answer = await page(ctx, { ...logQueryOf(options), limit, cursor: options.cursor });
  if (ctx.output.json) {
    ctx.output.result(answer, () => '');
    return;
  }
  if (!answer.data.length) ctx.output.info('No requests logged that match.');
  for (const entry of answer.data) ctx.output.write(logLine(entry, ctx.output.out));
  if (answer.next_cursor) ctx.output.info(`Older entries: --cursor ${answer.next_cursor}`);
}

function describe(filters: LogQuery): string {
  const parts = [
    filters.status && `status ${filters.status}`,
    filters.method,
    filters.path && `path ${filters.path}`,
    filters.request_id && `request ${filters.request_id}`,
    filters.since && `since ${filters.since}`,
  ].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
