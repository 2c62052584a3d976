import { Gauge, type Registry } from 'prom-client';
import type { Sql } from '../../db/pool.js';

/**
 * Gauges computed with SQL at scrape time (GET /metrics), so they are right whichever process
 * (server, `npm run worker`, several of each) did the work: the database is the one place that
 * knows. Each query is cheap at 100k rows:
 *
 * - worker queue: graphile_worker.jobs (the jobs table, small: jobs are deleted when done);
 * - voucher jobs: one row per job (a few per tag and voucher), counted exactly;
 * - passes: PostgreSQL's planner statistics (pg_class.reltuples × the `kind` frequencies of
 *   pg_stats), an ESTIMATE as of the last (auto)ANALYZE, not a count: counting millions of passes
 *   on every scrape would not stay under 50 ms;
 * - webhook deliveries: the pending ones counted exactly through their partial index
 *   (webhook_deliveries_due_idx); attempts of the last 5 minutes by outcome with their duration
 *   quantiles (webhook_attempts has no index on attempted_at: a sequential scan; the retention task
 *   keeps the table bounded);
 * - database connections: postgres.js exposes no pool statistics (connections in use, queries
 *   waiting for one), so what PostgreSQL sees is reported instead: the connections to this database
 *   by application_name (loyalty-server, loyalty-server-streams, loyalty-worker, …) and state, and
 *   those waiting on a lock.
 *
 * A query that fails (the database is down) leaves its gauges empty and `loyalty_metrics_database_up` 0.
 *
 * Measured (embedded PostgreSQL, 100k deliveries of which 10k pending, 100k attempts, 2,000 queued
 * jobs): a whole GET /metrics takes 26–30 ms warm, 55 ms for the first one.
 */
export type DatabaseMetrics = {
  /** Reads the gauges again unless they were read less than `maxAgeMs` ago (config.metricsCacheSeconds). */
  refresh: (sql: Sql, maxAgeMs: number) => Promise<void>;
};

const VOUCHER_JOB_STATUSES = ['queued', 'running', 'done', 'failed'];

export function createDatabaseMetrics(registry: Registry, prefix = 'loyalty_'): DatabaseMetrics {
  const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new Gauge<L>({ name: `${prefix}${name}`, help, labelNames, registers: [registry] });

  const up = gauge('metrics_database_up', 'Whether every database query of the last scrape answered (1) or not (0).');
  const queueDepth = gauge(
    'worker_queue_depth',
    'graphile-worker jobs waiting to run (not locked, attempts left), due or scheduled, per task.',
    ['task'],
  );
  const queueDue = gauge('worker_queue_due', 'graphile-worker jobs due now (run_at passed) and not locked, per task.', [
    'task',
  ]);
  const running = gauge('worker_jobs_running', 'graphile-worker jobs locked by a worker, per task.', ['task']);
  const failed = gauge('worker_jobs_failed', 'graphile-worker jobs out of attempts (kept for inspection), per task.', [
    'task',
  ]);
  const oldest = gauge(
    'worker_oldest_job_age_seconds',
    'Seconds since run_at of the oldest job that is due and not locked, per task (0 when none).',
    ['task'],
  );
  const voucherJobs = gauge('voucher_jobs', 'Voucher jobs by status.', ['status']);
  const voucherIssued = gauge('voucher_passes_issued', 'Passes issued by voucher jobs (sum of voucher_jobs.issued).');
  const passes = gauge(
    'passes_estimate',
    'Passes by kind: an estimate from PostgreSQL planner statistics (as of the last ANALYZE), not a count.',
    ['kind'],
  );
  const pending = gauge('webhook_deliveries_pending', 'Webhook deliveries still to be delivered (counted exactly).');
  const attempts = gauge(
    'webhook_attempts_recent',
    'Webhook delivery attempts of the last 5 minutes by outcome (success, http_4xx, http_5xx, http_other, error).',
    ['outcome'],
  );
  const attemptLatency = gauge(
    'webhook_attempt_duration_seconds_recent',
    'Duration of the webhook delivery attempts of the last 5 minutes, by quantile.',
    ['quantile'],
  );
  const connections = gauge(
    'db_connections',
    'Connections to this database by application_name and state (pg_stat_activity; postgres.js exposes no pool statistics).',
    ['application_name', 'state'],
  );
  const lockWaits = gauge(
    'db_connections_waiting',
    'Connections to this database waiting on a lock, by application_name (pg_stat_activity).',
    ['application_name'],
  );

  const queries: [Gauge<string>[], (sql: Sql) => Promise<void>][] = [
    [
      [queueDepth, queueDue, running, failed, oldest],
      async (sql) => {
        const rows = await sql<
          { task: string; depth: number; due: number; running: number; failed: number; oldest: number }[]
        >`
        SELECT task_identifier AS task,
               count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts)::int AS depth,
               count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now())::int AS due,
               count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running,
               count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed,
               coalesce(extract(epoch FROM now() - min(run_at) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now())), 0)::float8 AS oldest
        FROM graphile_worker.jobs GROUP BY task_identifier`;
        for (const r of rows) {
          queueDepth.set({ task: r.task }, r.depth);
          queueDue.set({ task: r.task }, r.due);
          running.set({ task: r.task }, r.running);
          failed.set({ task: r.task }, r.failed);
          oldest.set({ task: r.task }, r.oldest);
        }
      },
    ],
    [
      [voucherJobs, voucherIssued],
      async (sql) => {
        const rows = await sql<{ status: string; n: number; issued: number }[]>`
        SELECT status, count(*)::int AS n, coalesce(sum(issued), 0)::float8 AS issued FROM voucher_jobs GROUP BY status`;
        for (const status of VOUCHER_JOB_STATUSES)
          voucherJobs.set({ status }, rows.find((r) => r.status === status)?.n ?? 0);
        voucherIssued.set(rows.reduce((sum, r) => sum + r.issued, 0));
      },
    ],
    [
      [passes],
      async (sql) => {
        const rows = await sql<{ kind: string; n: number }[]>`
        SELECT v.kind, round(greatest(c.reltuples, 0) * v.freq)::float8 AS n
        FROM pg_class c
        JOIN pg_namespace ns ON ns.oid = c.relnamespace
        JOIN pg_stats s ON s.schemaname = ns.nspname AND s.tablename = c.relname AND s.attname = 'kind'
        CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(kind, freq)
        WHERE c.oid = 'passes'::regclass`;
        for (const kind of ['coupon', 'storecard']) passes.set({ kind }, rows.find((r) => r.kind === kind)?.n ?? 0);
      },
    ],
    [
      [pending, attempts, attemptLatency],
      async (sql) => {
        const [p] = await sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`;
        pending.set(p?.n ?? 0);
        const rows = await sql<{ outcome: string; n: number }[]>`
        SELECT CASE WHEN status_code BETWEEN 200 AND 299 THEN 'success'
                    WHEN status_code BETWEEN 400 AND 499 THEN 'http_4xx'
                    WHEN status_code BETWEEN 500 AND 599 THEN 'http_5xx'
                    WHEN status_code IS NOT NULL THEN 'http_other'
                    ELSE 'error' END AS outcome,
               count(*)::int AS n
        FROM webhook_attempts WHERE attempted_at > now() - interval '5 minutes' GROUP BY 1`;
        for (const outcome of ['success', 'http_4xx', 'http_5xx', 'http_other', 'error'])
          attempts.set({ outcome }, rows.find((r) => r.outcome === outcome)?.n ?? 0);
        const [q] = await sql<{ p50: number | null; p95: number | null; p99: number | null }[]>`
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) / 1000.0 AS p50,
               percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) / 1000.0 AS p95,
               percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) / 1000.0 AS p99
        FROM webhook_attempts WHERE attempted_at > now() - interval '5 minutes'`;
        if (q?.p50 != null) {
          attemptLatency.set({ quantile: '0.5' }, Number(q.p50));
          attemptLatency.set({ quantile: '0.95' }, Number(q.p95));
          attemptLatency.set({ quantile: '0.99' }, Number(q.p99));
        }
      },
    ],
    [
      [connections, lockWaits],
      async (sql) => {
        const rows = await sql<{ application_name: string; state: string; n: number; waiting: number }[]>`
        SELECT coalesce(nullif(application_name, ''), 'unknown') AS application_name, coalesce(state, 'unknown') AS state,
               count(*)::int AS n, count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting
        FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1, 2`;
        const waiting = new Map<string, number>();
        for (const r of rows) {
          connections.set({ application_name: r.application_name, state: r.state }, r.n);
          waiting.set(r.application_name, (waiting.get(r.application_name) ?? 0) + r.waiting);
        }
        for (const [application_name, n] of waiting) lockWaits.set({ application_name }, n);
      },
    ],
  ];

  // /metrics is not rate limited: scrapes share one refresh in flight, and one per maxAgeMs at most
  // (10 s by default), so neither a flood of scrapes nor several scrapers query the database per scrape.
  let inFlight: Promise<void> | undefined;
  let refreshedAt = 0;
  return {
    refresh(sql, maxAgeMs) {
      if (inFlight) return inFlight;
      if (Date.now() - refreshedAt < maxAgeMs) return Promise.resolve();
      inFlight = (async () => {
        const results = await Promise.allSettled(
          queries.map(async ([gauges, query]) => {
            for (const g of gauges) g.reset(); // a task or state gone since the last scrape disappears
            await query(sql);
          }),
        );
        up.set(results.every((r) => r.status === 'fulfilled') ? 1 : 0);
        refreshedAt = Date.now();
      })().finally(() => (inFlight = undefined));
      return inFlight;
    },
  };
}
