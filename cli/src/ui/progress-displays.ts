// The progress displays of the CLI, each as a live view or a line reporter.
import { importLine, type ImportProgressView, ratePerSecond, voucherLine, type VoucherJobProgress } from './format.js';
import {
  inkReporter,
  lineReporter,
  wantsLiveView,
  type ProgressReporter,
  type ReporterStream,
} from './progress-reporter.js';
import type { PointsProgressView } from './points-line.js';

export interface ReporterTarget {
  stream: ReporterStream;
  env: NodeJS.ProcessEnv;
  /** Forces the line reporter (e.g. --no-progress, or tests). */
  plain?: boolean;
}

export async function importReporter(
  target: ReporterTarget,
  file: string,
  initial: ImportProgressView,
): Promise<ProgressReporter<ImportProgressView>> {
  if (target.plain || !wantsLiveView(target.stream, target.env)) return lineReporter(target.stream, importLine);
  const [{ createElement }, { ImportProgress: View }] = await Promise.all([
    import('react'),
    import('./import-progress.js'),
  ]);
  return inkReporter(target.stream, (progress, now) => createElement(View, { file, progress, now }), initial);
}

/** Measures the job's rate from the snapshots it is given. */
export function voucherRateMeter(): (job: VoucherJobProgress) => number | undefined {
  let first: { at: number; processed: number } | undefined;
  return (job) => {
    const now = Date.now();
    if (!first || job.processed < first.processed) first = { at: now, processed: job.processed };
    if (job.status === 'queued') first = { at: now, processed: job.processed };
    const rate = ratePerSecond(job.processed - first.processed, first.at, now);
    return rate;
  };
}

export async function voucherReporter(
  target: ReporterTarget,
  initial: VoucherJobProgress,
): Promise<ProgressReporter<VoucherJobProgress>> {
  const rate = voucherRateMeter();
  if (target.plain || !wantsLiveView(target.stream, target.env)) {
    return lineReporter(target.stream, (job) => voucherLine(job, rate(job)));
  }
  const [{ createElement }, { VoucherProgress }] = await Promise.all([
    import('react'),
    import('./voucher-progress.js'),
  ]);
  return inkReporter(target.stream, (job) => createElement(VoucherProgress, { job, rate: rate(job) }), initial);
}

export async function pointsImportReporter(
  target: ReporterTarget,
  file: string,
  initial: PointsProgressView,
): Promise<ProgressReporter<PointsProgressView>> {
  const { pointsLine } = await import('./points-line.js');
  if (target.plain || !wantsLiveView(target.stream, target.env)) return lineReporter(target.stream, pointsLine);
  const [{ createElement }, { PointsProgress: View }] = await Promise.all([
    import('react'),
    import('./points-progress.js'),
  ]);
  return inkReporter(target.stream, (progress, now) => createElement(View, { file, progress, now }), initial);
}
