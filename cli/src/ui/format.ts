// Pure helpers shared by the ink views and the plain line reporter.
import type { components } from '@loyalty/sdk';
import { thousands } from '../help.js';
import type { ImportProgress } from '../import/run.js';

/**
 * 1234567 → "1,234,567". Not Intl.NumberFormat: creating one loads ICU's number formatting,
 * ~30 ms of CPU at the start of every command that counts (measured beside an empty module).
 */
export const formatCount = (n: number): string => thousands(Math.round(n));

/** Items per second since `startedAt`, or undefined before there is anything to measure. */
export function ratePerSecond(done: number, startedAt: number, now: number): number | undefined {
  const seconds = (now - startedAt) / 1000;
  if (done <= 0 || seconds < 0.2) return undefined;
  return done / seconds;
}

/** Seconds left at the current rate, or undefined when unknown. */
export function etaSeconds(done: number, total: number, rate: number | undefined): number | undefined {
  if (!rate || total <= 0) return undefined;
  return Math.max(0, (total - done) / rate);
}

export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

export function percent(done: number, total: number): number {
  return total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return '█'.repeat(filled) + '░'.repeat(width - filled);
}

/** An import's progress as shown: `waiting` says the calls wait for the per-token rate limit. */
export type ImportProgressView = ImportProgress & {
  waiting?: string | undefined;
  /** A retry being waited for ("Cannot reach the API at …; retrying in 2 s (attempt 2 of 4)…"). */
  retrying?: string | undefined;
};

/** The counters of a voucher job that the progress displays show: fields of the document's VoucherJob. */
export type VoucherJobProgress = Pick<
  components['schemas']['VoucherJob'],
  'job_id' | 'status' | 'total' | 'processed' | 'issued' | 'skipped' | 'failed'
>;

export function importLine(p: ImportProgressView, now: number): string {
  if (p.phase === 'reading') return `import: reading and validating… ${formatCount(p.rows)} rows`;
  const rate = ratePerSecond(p.rowsThisRun, p.startedAt, now);
  return [
    `import: ${formatCount(p.rowsDone)}/${formatCount(p.rowsTotal)} rows (${percent(p.rowsDone, p.rowsTotal)}%)`,
    `${p.batchesDone}/${p.batchesTotal} batches`,
    `new ${formatCount(p.new)}`,
    `found ${formatCount(p.found)}`,
    `rejected ${formatCount(p.rejected)}`,
    rate ? `${formatCount(rate)} rows/s` : undefined,
    p.phase === 'done' ? 'done' : `ETA ${formatDuration(etaSeconds(p.rowsDone, p.rowsTotal, rate))}`,
    p.phase === 'done' ? undefined : p.waiting,
  ]
    .filter(Boolean)
    .join(', ');
}

export function voucherLine(job: VoucherJobProgress, rate: number | undefined): string {
  return [
    `job ${job.job_id} ${job.status}: ${formatCount(job.processed)}/${formatCount(job.total)} members (${percent(job.processed, job.total)}%)`,
    `issued ${formatCount(job.issued)}`,
    `skipped ${formatCount(job.skipped)}`,
    `failed ${formatCount(job.failed)}`,
    rate ? `${formatCount(rate)}/s` : undefined,
    job.status === 'done' || job.status === 'failed'
      ? undefined
      : `ETA ${formatDuration(etaSeconds(job.processed, job.total, rate))}`,
  ]
    .filter(Boolean)
    .join(', ');
}
