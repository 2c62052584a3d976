import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { ImportProgress as Progress } from '../import/run.js';
import { ImportProgress } from './import-progress.js';

const base: Progress = {
  phase: 'sending',
  rows: 10_000,
  rejected: 3,
  batchesTotal: 5,
  batchesDone: 2,
  rowsDone: 4_000,
  rowsTotal: 9_997,
  new: 3_900,
  found: 100,
  rowsThisRun: 4_000,
  startedAt: 0,
};

describe('ImportProgress', () => {
  it('shows rows, batches, counts, rate and ETA while sending', () => {
    const { lastFrame } = render(<ImportProgress file="members.csv" progress={base} now={2_000} />);
    const frame = lastFrame()!;
    expect(frame).toContain('Importing members.csv');
    expect(frame).toContain('4,000 of 9,997 rows (40%) · batch 2 of 5');
    expect(frame).toContain('new 3,900 · found 100 · rejected 3 · 2,000 rows/s · ETA 3s');
  });

  it('says when it is done and drops the ETA', () => {
    const { lastFrame } = render(
      <ImportProgress
        file="members.csv"
        progress={{ ...base, phase: 'done', batchesDone: 5, rowsDone: 9_997 }}
        now={5_000}
      />,
    );
    expect(lastFrame()).toContain('✔ Imported members.csv');
    expect(lastFrame()).toContain('batch 5 of 5');
    expect(lastFrame()).not.toContain('ETA');
  });

  it('shows the reading phase, with the rows read so far, before batches exist', () => {
    const { lastFrame } = render(<ImportProgress file="-" progress={{ ...base, phase: 'reading' }} now={0} />);
    expect(lastFrame()).toBe('Reading and validating -… 10,000 rows');
  });

  it('says when the calls wait for the rate limit, and only then', () => {
    const waiting = render(
      <ImportProgress
        file="m.csv"
        progress={{ ...base, waiting: 'waiting for the rate limit for 12 s' }}
        now={10_000}
      />,
    );
    expect(waiting.lastFrame()).toContain(
      "waiting for the rate limit for 12 s: the token's limit bounds this run, not the server (see --help)",
    );
    const flowing = render(<ImportProgress file="m.csv" progress={base} now={10_000} />);
    expect(flowing.lastFrame()).not.toContain('rate limit');
  });

  it('shows a retry being waited for in the view (no line may be written under it)', () => {
    const line = 'Cannot reach the API at http://127.0.0.1:3000 (ECONNREFUSED); retrying in 2 s (attempt 2 of 4)…';
    const { lastFrame } = render(<ImportProgress file="m.csv" progress={{ ...base, retrying: line }} now={10_000} />);
    expect(lastFrame()).toContain(line);
  });
});
