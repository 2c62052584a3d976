import type { Sql } from '../../db/pool.js';
import { holdOffOrganizationRemoval } from '../platform/organization-data.js';

/** One row of the request log, as the server saw a finished request (plugins/request-log-store.ts). */
export type RequestLogRow = {
  organization_id: string;
  /** When the request arrived, ISO. */
  created_at: string;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  request_id: string;
  client_id: string | null;
  error_code: string | null;
};

export type RequestLogBufferOptions = {
  /** Flush this often at most (ms) while rows wait. */
  intervalMs?: number;
  /** Flush at once when this many rows wait. */
  batchRows?: number;
  /** Rows kept while the database cannot take them; past it (and a tenth more) the oldest go, down to it (counted by onDrop). */
  maxRows?: number;
  /** Rows dropped because the buffer was full (the database down or too slow). */
  onDrop?: (rows: number) => void;
  /** The first flush that failed after one that worked (the rows stay buffered and are tried again, every second). */
  onError?: (error: unknown) => void;
};

/** The channel a flush notifies, with the organization's id: GET /request-logs long polls wait on it. */
export const REQUEST_LOGS_CHANNEL = 'loyalty_request_logs';

/**
 * The request log's writer: rows are kept in this process and written in batches, one multi-row
 * INSERT a batch (every `intervalMs`, or at once past `batchRows` rows), never on a request's path.
 * The request only pushes a row into an array. While the database is down the rows stay, up to
 * `maxRows`; past it the oldest are dropped and counted, so a request never waits nor fails for
 * its log line. `close` writes what is left (the server's stop).
 */
export function createRequestLogBuffer(sql: Sql, options: RequestLogBufferOptions = {}) {
  const intervalMs = options.intervalMs ?? 250;
  const batchRows = options.batchRows ?? 500;
  const maxRows = options.maxRows ?? 20_000;
  const slack = Math.max(1, Math.floor(maxRows / 10));
  let rows: RequestLogRow[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let dropped = 0;
  let written = 0;
  let closed = false;
  let failing = false;

  const schedule = () => {
    if (timer || closed) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        void flush();
      },
      failing ? Math.max(intervalMs, 1000) : intervalMs,
    );
    timer.unref();
  };

  const writeBatch = async (batch: RequestLogRow[]) => {
    // First the removals of these organizations are waited for and held off (a shared lock each),
    // then one statement, whose snapshot sees a removal that went first: the rows from one JSON
    // parameter, and one notification per organization, sent by PostgreSQL at commit.
    await sql.begin(async (tx) => {
      await holdOffOrganizationRemoval(
        tx,
        batch.map((r) => r.organization_id),
      );
      await tx`
      WITH added AS (
        INSERT INTO request_logs (organization_id, created_at, method, route, status, duration_ms, request_id, client_id, error_code)
        SELECT organization_id, created_at, method, route, status, duration_ms, request_id, client_id, error_code
        FROM ROWS FROM (json_to_recordset(${JSON.stringify(batch)}::text::json) AS (
          organization_id text, created_at timestamptz, method text, route text, status smallint,
          duration_ms integer, request_id text, client_id text, error_code text)) WITH ORDINALITY
          AS r(organization_id, created_at, method, route, status, duration_ms, request_id, client_id, error_code, n)
        -- Not for an organization removed meanwhile (deleted, or expired and removed by retention,
        -- maybe by another process): its rows would outlive it. Nor of a request answered before
        -- the organization's last sandbox reset began (another process's reset: migration 0048).
        WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.organization_id
                        AND (o.request_log_since IS NULL
                             OR r.created_at + make_interval(secs => r.duration_ms / 1000.0) >= o.request_log_since))
        ORDER BY r.n -- ids in the order the requests finished: the log's cursor order
        RETURNING organization_id)
      SELECT pg_notify(${REQUEST_LOGS_CHANNEL}, organization_id) FROM (SELECT DISTINCT organization_id FROM added) o`;
    });
  };

  /** Writes what waits, batch by batch. A failed batch goes back to the front, to be tried again. */
  const drain = async () => {
    while (rows.length) {
      const batch = rows.slice(0, batchRows);
      rows = rows.slice(batch.length);
      try {
        await writeBatch(batch);
        written += batch.length;
        failing = false;
      } catch (error) {
        rows = batch.concat(rows);
        trim();
        if (!failing) options.onError?.(error);
        failing = true;
        return;
      }
    }
  };

  /** One flush at a time: a call during a flush shares it (its loop takes the rows added meanwhile). */
  const flush = (): Promise<void> => {
    // `.finally` runs after the assignment even when drain has nothing to wait for.
    flushing ??= drain().finally(() => {
      flushing = undefined;
      if (rows.length) schedule();
    });
    return flushing;
  };

  const trim = () => {
    const over = rows.length - maxRows;
    if (over <= 0) return;
    rows = rows.slice(over);
    dropped += over;
    options.onDrop?.(over);
  };

  return {
    /** Takes a request's row; never waits, never throws. */
    add(row: RequestLogRow) {
      if (closed) return;
      rows.push(row);
      // Trimmed a tenth at a time: dropping one row per row added would copy the whole buffer each
      // time (measured: ~1 ms a request once full, in the bench's writer run).
      if (rows.length > maxRows + slack) trim();
      if (rows.length >= batchRows && !flushing) void flush();
      else schedule();
    },
    /** Writes what waits now (tests, and the server's stop). */
    flush: async () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await flushing;
      await flush();
    },
    /** Writes what is left and takes no more rows. */
    async close() {
      await this.flush();
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    stats: () => ({ waiting: rows.length, written, dropped }),
  };
}

export type RequestLogBuffer = ReturnType<typeof createRequestLogBuffer>;
