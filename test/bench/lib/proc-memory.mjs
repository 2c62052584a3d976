// Memory of another process, read from /proc/<pid>/status (Linux): the peak RSS of a process from
// start to exit (a CLI run), and the peak RSS growth of a long-lived process during one operation
// (the server while it answers). Bytes throughout.
import { readFileSync, writeFileSync } from 'node:fs';

/** `VmRSS`, `VmHWM`, … of a process in bytes; undefined once it has exited (or became a zombie). */
export function statusBytes(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Follows a process from now until it exits: the highest `VmHWM` (the kernel's own peak of RSS)
 * read every `intervalMs`. Only growth in the last interval before exit can be missed.
 */
export function followPeak(pid, { intervalMs = 50 } = {}) {
  let peak = 0;
  const read = () => {
    peak = Math.max(peak, statusBytes(pid, 'VmHWM') ?? 0, statusBytes(pid, 'VmRSS') ?? 0);
  };
  read();
  const timer = setInterval(read, intervalMs);
  return {
    /** the peak so far, in bytes */
    stop() {
      read();
      clearInterval(timer);
      return peak;
    },
  };
}

/**
 * The RSS growth of a running process during an operation: its RSS before, against its peak while
 * the operation runs. The peak is the kernel's `VmHWM`, reset at the start by writing 5 to
 * /proc/<pid>/clear_refs (root or the same user), and `VmRSS` read every `intervalMs` besides
 * (the only measure where the reset is refused).
 */
export function watchGrowth(pid, { intervalMs = 50 } = {}) {
  let exactPeak = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    exactPeak = false;
  }
  const before = statusBytes(pid, 'VmRSS') ?? 0;
  let peak = before;
  const read = () => {
    peak = Math.max(peak, statusBytes(pid, 'VmRSS') ?? 0, exactPeak ? (statusBytes(pid, 'VmHWM') ?? 0) : 0);
  };
  const timer = setInterval(read, intervalMs);
  return {
    /** growth in bytes (peak during the operation minus RSS before it); `exactPeak` false when only sampled */
    stop() {
      read();
      clearInterval(timer);
      return { growth: peak - before, before, peak, exactPeak };
    },
  };
}
