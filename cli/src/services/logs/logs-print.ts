// How a request log entry is shown: one line for a person (status coloured by class), or the
// entry itself as one JSON object per line with --json (JSON Lines, for jq).
import type { components } from '@loyalty/sdk';
import type { Output, Palette } from '../../output.js';
import { showControlsKeepingPaint } from '../../ui/controls.js';

export type LogEntry = components['schemas']['RequestLogEntry'];

const statusPaint = (paint: Palette, status: number) =>
  status >= 500 ? paint.red : status >= 400 ? paint.yellow : status >= 300 ? paint.cyan : paint.green;

/** `2026-11-28 10:15:30  422  POST    /members  12 ms  <request id>  validation_failed` */
export function logLine(entry: LogEntry, paint: Palette): string {
  const time = entry.created_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  return [
    paint.dim(time),
    statusPaint(paint, entry.status)(String(entry.status)),
    entry.method.padEnd(6),
    paint.bold(entry.route),
    `${entry.duration_ms} ms`,
    paint.dim(entry.request_id),
    ...(entry.error_code ? [paint.red(entry.error_code)] : []),
  ].join('  ');
}

/** One entry: a JSON line with --json (through --jq when given: the one door), else a line for a person. */
export function printEntry(output: Output, entry: LogEntry): void {
  if (output.json) output.jsonLine(entry);
  else output.write(showControlsKeepingPaint(logLine(entry, output.out)));
}
