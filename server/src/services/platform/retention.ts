import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';

/** Rows deleted by one purge, by kind. */
export type PurgeCounts = {
  events: number;
  deliveries: number;
  attempts: number;
  voucherJobs: number;
  accessTokens: number;
  idempotencyKeys: number;
  workerJobs: number;
  walletPushes: number;
  requestLogs: number;
};

/** The counts of a purge that deleted nothing. */
export const noPurgeCounts = (): PurgeCounts => ({
  events: 0,
  deliveries: 0,
  attempts: 0,
  voucherJobs: 0,
  accessTokens: 0,
  idempotencyKeys: 0,
  workerJobs: 0,
  walletPushes: 0,
  requestLogs: 0,
});

export type PurgeOptions = {
  /** LOYALTY_RETENTION_DAYS (may be fractional). */
  retentionDays: number;
  /** Rows a statement deletes at most: each batch is a short statement of its own. */
  batchSize?: number;
  /** Batches of one kind per run at most, so that a run stays short; the next run carries on. */
  maxBatches?: number;
};

/** Access tokens are kept this long after they expired (a token that just failed can still be told apart from an unknown one). */
const TOKEN_GRACE_SECONDS = 86_400;

/**
 * Deletes what is older than the retention period, in batches of `batchSize` rows (each batch one
 * statement, its own transaction, rows locked only for it), until a batch deletes fewer rows or
 * `maxBatches` batches ran for a kind:
 *
 * - webhook deliveries with a final status (delivered, failed) created and last changed before
 *   the retention period, with their attempts; pending deliveries never;
 * - events older than the retention period that no delivery refers to any more (a pending one
 *   sends the event, a finished one can be retried by hand);
 * - voucher jobs that finished (done, failed) before the retention period, with their lanes; the
 *   voucher grants stay (a member gets a voucher through a tag once), they go with their tag;
 * - access tokens expired for more than a day, idempotency keys expired (and not claimed);
 * - the sandbox's record of wallet pushes (wallet_pushes) sent before the retention period;
 * - the request log (request_logs) of requests received before the retention period;
 * - graphile-worker jobs that failed permanently (no attempt left, not running) and last changed
 *   before the retention period; completed jobs are deleted by graphile-worker itself.
 *
 * Rows another transaction holds are skipped (SKIP LOCKED) and taken by a later run.
 */
export async function purgeOldRows(db: Db, options: PurgeOptions): Promise<PurgeCounts> {
  const n = Math.max(1, Math.floor(options.batchSize ?? 1000));
  const maxBatches = Math.max(1, Math.floor(options.maxBatches ?? 100));
  const seconds = Math.max(0, options.retentionDays * 86_400);
  const cutoff = db`now() - make_interval(secs => ${seconds}::float8)`;
  const counts = noPurgeCounts();

  /** Runs `batch` until it deletes fewer than n rows (its first count) or maxBatches ran. */
  const repeat = async <T extends [number, ...number[]]>(batch: () => Promise<T>, add: (counts: T) => void) => {
    for (let i = 0; i < maxBatches; i++) {
      const deleted = await batch();
      add(deleted);
      if (deleted[0] < n) return;
    }
  };

  // Deliveries first: their events are kept while a delivery refers to them.
  await repeat(
    async () => {
      const rows = await db<{ deliveries: number; attempts: number }[]>`
      WITH victims AS (
        SELECT id FROM webhook_deliveries
        WHERE created_at < ${cutoff} AND updated_at < ${cutoff} AND status IN ('delivered', 'failed')
        LIMIT ${n} -- any n of them: no ORDER BY, which the BRIN index of created_at cannot give without sorting every old row
        FOR UPDATE SKIP LOCKED
      ), attempts AS (
        DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM victims) RETURNING 1
      ), deliveries AS (
        DELETE FROM webhook_deliveries d
        WHERE d.id IN (SELECT id FROM victims) AND d.status IN ('delivered', 'failed')
        RETURNING 1
      )
      SELECT (SELECT count(*)::int FROM deliveries) AS deliveries, (SELECT count(*)::int FROM attempts) AS attempts`;
      const row = firstRow(rows, 'the counts of deleted deliveries and attempts');
      return [row.deliveries, row.attempts];
    },
    ([deliveries, attempts]) => {
      counts.deliveries += deliveries;
      counts.attempts += attempts;
    },
  );

  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM events WHERE id IN (
        SELECT e.id FROM events e
        WHERE e.created_at < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
        LIMIT ${n})
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.events += c;
    },
  );

  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM voucher_jobs j WHERE j.id IN (
        SELECT id FROM voucher_jobs
        WHERE status IN ('done', 'failed') AND finished_at < ${cutoff}
        ORDER BY finished_at LIMIT ${n}
        FOR UPDATE SKIP LOCKED)
        AND j.status IN ('done', 'failed')
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.voucherJobs += c;
    },
  );

  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM access_tokens WHERE token_hash IN (
        SELECT token_hash FROM access_tokens
        WHERE expires_at < now() + make_interval(secs => (SELECT coalesce(max(offset_seconds), 0) FROM sandbox_clocks))
          AND expires_at < loyalty_now_latest(organization_ids) - make_interval(secs => ${TOKEN_GRACE_SECONDS})
        ORDER BY expires_at LIMIT ${n})
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.accessTokens += c;
    },
  );

  // A key taken over since the batch found it (services/platform/idempotency.ts) is locked or no longer
  // expired: the lock skips it and the outer condition is checked again on the latest version.
  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM idempotency_keys k WHERE k.scope_hash IN (
        SELECT scope_hash FROM idempotency_keys
        WHERE expires_at < now() + make_interval(secs => (SELECT coalesce(max(offset_seconds), 0) FROM sandbox_clocks))
          AND expires_at < loyalty_now_latest(organization_ids) AND NOT (state = 'in_progress' AND locked_until > now())
        ORDER BY expires_at LIMIT ${n}
        FOR UPDATE SKIP LOCKED)
        AND k.expires_at < loyalty_now_latest(k.organization_ids) AND NOT (k.state = 'in_progress' AND k.locked_until > now())
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.idempotencyKeys += c;
    },
  );

  // graphile-worker 0.17: graphile_worker.jobs is a view over _private_jobs. A job that failed for
  // good has no attempt left and no lock (a job on its last attempt while it runs has its lock).
  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM graphile_worker._private_jobs j WHERE j.id IN (
        SELECT id FROM graphile_worker.jobs
        WHERE attempts >= max_attempts AND locked_at IS NULL AND updated_at < ${cutoff}
        ORDER BY id LIMIT ${n})
        AND j.attempts >= j.max_attempts AND j.locked_at IS NULL AND j.updated_at < ${cutoff}
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.workerJobs += c;
    },
  );

  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM wallet_pushes WHERE id IN (
        SELECT id FROM wallet_pushes WHERE sent_at < ${cutoff} LIMIT ${n})
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.walletPushes += c;
    },
  );

  await repeat(
    async () => {
      const rows = await db`
      DELETE FROM request_logs WHERE (id, created_at) IN (
        SELECT id, created_at FROM request_logs WHERE created_at < ${cutoff} LIMIT ${n})
      RETURNING 1`;
      return [rows.count];
    },
    ([c]) => {
      counts.requestLogs += c;
    },
  );

  return counts;
}

/** The log line of a purge that deleted something (`loyalty: retention: purged …`), or undefined. */
export function describePurge(c: PurgeCounts): string | undefined {
  const total = Object.values(c).reduce((a, b) => a + b, 0);
  if (!total) return undefined;
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  return `loyalty: retention: purged ${[
    n(c.events, 'event', 'events'),
    n(c.deliveries, 'webhook delivery', 'webhook deliveries'),
    n(c.attempts, 'webhook attempt', 'webhook attempts'),
    n(c.voucherJobs, 'voucher job', 'voucher jobs'),
    n(c.accessTokens, 'expired access token', 'expired access tokens'),
    n(c.idempotencyKeys, 'expired idempotency key', 'expired idempotency keys'),
    n(c.workerJobs, 'failed worker job', 'failed worker jobs'),
    n(c.walletPushes, 'sandbox wallet push', 'sandbox wallet pushes'),
    n(c.requestLogs, 'request log entry', 'request log entries'),
  ].join(', ')}`;
}
