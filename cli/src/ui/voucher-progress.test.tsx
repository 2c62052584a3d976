import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { VoucherJobProgress } from './format.js';
import { VoucherProgress } from './voucher-progress.js';

const job: VoucherJobProgress = {
  job_id: 'job-1',
  status: 'running',
  total: 10_000,
  processed: 2_500,
  issued: 2_490,
  skipped: 7,
  failed: 3,
};

describe('VoucherProgress', () => {
  it('shows processed of total, issued, skipped, failed, rate and ETA', () => {
    const { lastFrame } = render(<VoucherProgress job={job} rate={500} />);
    const frame = lastFrame()!;
    expect(frame).toContain('Voucher job job-1 running');
    expect(frame).toContain('2,500 of 10,000 members (25%)');
    expect(frame).toContain('issued 2,490 · skipped 7 · failed 3 · 500/s · ETA 15s');
  });

  it('shows an unknown total while the job is queued', () => {
    const { lastFrame } = render(
      <VoucherProgress
        job={{ ...job, status: 'queued', total: 0, processed: 0, issued: 0, skipped: 0, failed: 0 }}
        rate={undefined}
      />,
    );
    expect(lastFrame()).toContain('0 of ? members');
    expect(lastFrame()).toContain('ETA –');
  });

  it('has no ETA once the job is done', () => {
    const { lastFrame } = render(<VoucherProgress job={{ ...job, status: 'done', processed: 10_000 }} rate={500} />);
    expect(lastFrame()).toContain('done');
    expect(lastFrame()).not.toContain('ETA');
  });
});
