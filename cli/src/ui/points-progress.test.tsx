import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { pointsLine, type PointsProgressView } from './points-line.js';
import { PointsProgress } from './points-progress.js';

const base: PointsProgressView = {
  phase: 'sending',
  rows: 1_000,
  rejected: 2,
  rowsTotal: 800,
  rowsDone: 200,
  created: 150,
  adjusted: 50,
  unchanged: 198,
  rowsThisRun: 200,
  startedAt: 0,
};

describe('points import progress', () => {
  it('the live view shows rows to send, the plan’s counts, rate and ETA', () => {
    const frame = render(<PointsProgress file="balances.csv" progress={base} now={2_000} />).lastFrame() ?? '';
    expect(frame).toContain('Importing points of balances.csv');
    expect(frame).toContain('200 of 800 rows (25%) · 100 rows/s · ETA 6s');
    expect(frame).toMatch(/created 150 · adjusted 50 ·\s+unchanged 198 · rejected 2/);
  });

  it('the line says the same without a terminal, and what it waits for', () => {
    expect(pointsLine({ ...base, waiting: 'waiting 3 s for the rate limit' }, 2_000)).toBe(
      'points import: 200/800 rows to send (25%), created 150, adjusted 50, unchanged 198, rejected 2, 100 rows/s, ETA 6s, waiting 3 s for the rate limit',
    );
    expect(pointsLine({ ...base, phase: 'planning' }, 0)).toBe(
      'points import: 1,000 rows read; reading members, passes and balances…',
    );
    expect(pointsLine({ ...base, phase: 'done', rowsDone: 800 }, 2_000)).toMatch(/800\/800 rows .* done$/);
  });
});
