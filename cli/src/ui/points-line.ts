// `points import` progress as one plain line (non-TTY, CI, --no-progress).
import type { PointsProgress } from '../import/points/run.js';
import { etaSeconds, formatCount, formatDuration, percent, ratePerSecond } from './format.js';

export type PointsProgressView = PointsProgress & { waiting?: string | undefined; retrying?: string | undefined };

export function pointsLine(p: PointsProgressView, now: number): string {
  if (p.phase === 'reading') return 'points import: reading and checking the rows…';
  if (p.phase === 'planning')
    return `points import: ${formatCount(p.rows)} rows read; reading members, passes and balances…`;
  const rate = ratePerSecond(p.rowsThisRun, p.startedAt, now);
  return [
    `points import: ${formatCount(p.rowsDone)}/${formatCount(p.rowsTotal)} rows to send (${percent(p.rowsDone, p.rowsTotal)}%)`,
    `created ${formatCount(p.created)}`,
    `adjusted ${formatCount(p.adjusted)}`,
    `unchanged ${formatCount(p.unchanged)}`,
    `rejected ${formatCount(p.rejected)}`,
    rate ? `${formatCount(rate)} rows/s` : undefined,
    p.phase === 'done' ? 'done' : `ETA ${formatDuration(etaSeconds(p.rowsDone, p.rowsTotal, rate))}`,
    p.phase === 'done' ? undefined : (p.retrying ?? p.waiting),
  ]
    .filter(Boolean)
    .join(', ');
}
