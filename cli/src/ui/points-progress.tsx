import { Box, Text } from 'ink';
import { showControls } from './controls.js';
import { etaSeconds, formatCount, formatDuration, percent, progressBar, ratePerSecond } from './format.js';
import { pointsLine, type PointsProgressView } from './points-line.js';

export function PointsProgress({
  file,
  progress: p,
  now,
}: {
  file: string;
  progress: PointsProgressView;
  now: number;
}) {
  if (p.phase === 'reading' || p.phase === 'planning') return <Text>{pointsLine(p, now)}</Text>;
  const rate = ratePerSecond(p.rowsThisRun, p.startedAt, now);
  const done = p.phase === 'done';
  return (
    <Box flexDirection="column">
      <Text>
        {done ? <Text color="green">✔ Imported points of</Text> : <Text color="cyan">Importing points of</Text>}{' '}
        <Text bold>{showControls(file)}</Text>
      </Text>
      <Text>
        <Text color={done ? 'green' : 'cyan'}>{progressBar(p.rowsDone, p.rowsTotal)}</Text> {formatCount(p.rowsDone)} of{' '}
        {formatCount(p.rowsTotal)} rows ({percent(p.rowsDone, p.rowsTotal)}%)
        {rate ? ` · ${formatCount(rate)} rows/s` : ''}
        {done ? '' : ` · ETA ${formatDuration(etaSeconds(p.rowsDone, p.rowsTotal, rate))}`}
      </Text>
      <Text>
        created <Text bold>{formatCount(p.created)}</Text> · adjusted <Text bold>{formatCount(p.adjusted)}</Text> ·
        unchanged <Text bold>{formatCount(p.unchanged)}</Text> · rejected{' '}
        <Text bold color={p.rejected > 0 ? 'yellow' : undefined}>
          {formatCount(p.rejected)}
        </Text>
      </Text>
      {p.retrying && !done ? <Text color="yellow">{p.retrying}</Text> : null}
      {p.waiting && !done ? <Text color="yellow">{p.waiting}</Text> : null}
    </Box>
  );
}
