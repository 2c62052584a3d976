import { Box, Text } from 'ink';
import { etaSeconds, formatCount, formatDuration, percent, progressBar, type VoucherJobProgress } from './format.js';
import { showControls } from './controls.js';

export interface VoucherProgressProps {
  job: VoucherJobProgress;
  /** Members per second, measured by the caller across snapshots. */
  rate: number | undefined;
}

const statusColor: Record<string, string> = { queued: 'gray', running: 'cyan', done: 'green', failed: 'red' };

export function VoucherProgress({ job, rate }: VoucherProgressProps) {
  const finished = job.status === 'done' || job.status === 'failed';
  return (
    <Box flexDirection="column">
      <Text>
        Voucher job <Text bold>{showControls(job.job_id)}</Text>{' '}
        <Text color={statusColor[job.status] ?? 'white'}>{showControls(job.status)}</Text>
      </Text>
      <Text>
        <Text color={statusColor[job.status] ?? 'white'}>{progressBar(job.processed, job.total)}</Text>{' '}
        {formatCount(job.processed)} of {job.status === 'queued' && job.total === 0 ? '?' : formatCount(job.total)}{' '}
        members ({percent(job.processed, job.total)}%)
      </Text>
      <Text>
        issued <Text bold>{formatCount(job.issued)}</Text> · skipped <Text bold>{formatCount(job.skipped)}</Text> ·
        failed{' '}
        <Text bold color={job.failed > 0 ? 'red' : undefined}>
          {formatCount(job.failed)}
        </Text>
        {rate ? ` · ${formatCount(rate)}/s` : ''}
        {finished ? '' : ` · ETA ${formatDuration(etaSeconds(job.processed, job.total, rate))}`}
      </Text>
    </Box>
  );
}
