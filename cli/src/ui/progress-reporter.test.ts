import { afterEach, describe, expect, it, vi } from 'vitest';
import { etaSeconds, formatDuration, importLine, voucherLine } from './format.js';
import { isCi, lineReporter, wantsLiveView } from './progress-reporter.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('wantsLiveView', () => {
  it('renders live only on a terminal outside CI', () => {
    expect(wantsLiveView({ isTTY: true, write: () => true }, {})).toBe(true);
    expect(wantsLiveView({ isTTY: false, write: () => true }, {})).toBe(false);
    expect(wantsLiveView({ isTTY: true, write: () => true }, { CI: 'true' })).toBe(false);
    expect(wantsLiveView({ isTTY: true, write: () => true }, { TERM: 'dumb' })).toBe(false);
    expect(isCi({ CI: 'false' })).toBe(false);
    expect(isCi({ GITHUB_ACTIONS: 'true' })).toBe(true);
  });
});

describe('lineReporter', () => {
  it('prints the first state at once, then one line every interval, and the final state', async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const reporter = lineReporter<number>({ write: (text) => lines.push(text) > 0 }, (n) => `at ${n}`, 2000);
    reporter.update(1);
    reporter.update(2);
    reporter.update(3);
    expect(lines).toEqual(['at 1\n']);
    vi.advanceTimersByTime(2000);
    expect(lines).toEqual(['at 1\n', 'at 3\n']);
    vi.advanceTimersByTime(6000); // nothing new: no repeated lines
    expect(lines).toHaveLength(2);
    await reporter.finish(9);
    vi.advanceTimersByTime(10_000);
    expect(lines).toEqual(['at 1\n', 'at 3\n', 'at 9\n']);
  });
});

describe('line formats', () => {
  it('summarises an import in one line', () => {
    const line = importLine(
      {
        phase: 'sending',
        rows: 100,
        rejected: 1,
        batchesTotal: 5,
        batchesDone: 2,
        rowsDone: 40,
        rowsTotal: 99,
        new: 39,
        found: 1,
        rowsThisRun: 40,
        startedAt: 0,
      },
      4000,
    );
    expect(line).toBe('import: 40/99 rows (40%), 2/5 batches, new 39, found 1, rejected 1, 10 rows/s, ETA 6s');
  });

  it('summarises a voucher job in one line', () => {
    expect(
      voucherLine({ job_id: 'j', status: 'running', total: 100, processed: 50, issued: 48, skipped: 1, failed: 1 }, 10),
    ).toBe('job j running: 50/100 members (50%), issued 48, skipped 1, failed 1, 10/s, ETA 5s');
  });

  it('formats durations and ETAs', () => {
    expect(formatDuration(59.4)).toBe('59s');
    expect(formatDuration(125)).toBe('2m 05s');
    expect(formatDuration(7260)).toBe('2h 01m');
    expect(formatDuration(undefined)).toBe('–');
    expect(etaSeconds(10, 100, undefined)).toBeUndefined();
    expect(etaSeconds(10, 100, 9)).toBe(10);
  });
});
