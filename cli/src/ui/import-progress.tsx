import { Box, Text } from 'ink';
import { showControls } from './controls.js';
import {
  etaSeconds,
  formatCount,
  formatDuration,
  percent,
  progressBar,
  ratePerSecond,
  type ImportProgressView,
} from './format.js';

export interface ImportProgressProps {
  file: string;
  progress: ImportProgressView;
  now: number;
}

export function ImportProgress({ file, progress: p, now }: ImportProgressProps) {
  if (p.phase === 'reading') {
    return (
      <Text>
        Reading and validating <Text bold>{showControls(file)}</Text>… {formatCount(p.rows)} rows
      </Text>
    );
  }
  const rate = ratePerSecond(p.rowsThisRun, p.startedAt, now);
  const done = p.phase === 'done';
  return (
    <Box flexDirection="column">
      <Text>
        {done ? <Text color="green">✔ Imported</Text> : <Text color="cyan">Importing</Text>}{' '}
        <Text bold>{showControls(file)}</Text>
      </Text>
      <Text>
        <Text color={done ? 'green' : 'cyan'}>{progressBar(p.rowsDone, p.rowsTotal)}</Text> {formatCount(p.rowsDone)} of{' '}
        {formatCount(p.rowsTotal)} rows ({percent(p.rowsDone, p.rowsTotal)}%) · batch {p.batchesDone} of{' '}
        {p.batchesTotal}
      </Text>
      <Text>
        new <Text bold>{formatCount(p.new)}</Text> · found <Text bold>{formatCount(p.found)}</Text> · rejected{' '}
        <Text bold color={p.rejected > 0 ? 'yellow' : undefined}>
          {formatCount(p.rejected)}
        </Text>
        {rate ? ` · ${formatCount(rate)} rows/s` : ''}
        {done ? '' : ` · ETA ${formatDuration(etaSeconds(p.rowsDone, p.rowsTotal, rate))}`}
      </Text>
      {p.retrying && !done ? <Text color="yellow">{p.retrying}</Text> : null}
      {p.waiting && !done ? (
        <Text color="yellow">{p.waiting}: the token's limit bounds this run, not the server (see --help)</Text>
      ) : null}
    </Box>
  );
}
