// CPU time of processes from /proc (Linux): on a machine other work shares, CPU time tells what
// a run cost better than its wall time does. Clock ticks are taken as 1/100 s (USER_HZ on Linux).
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10;

/** `/proc/<pid>/stat`'s fields after the command name: [state, ppid, …]. */
function statFields(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU milliseconds (user + system) used so far by `pid` and every live descendant of it; 0 off Linux. */
export function treeCpuMs(pid) {
  const processes = new Map();
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = statFields(entry);
      processes.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended while we looked
    }
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, { ppid }] of processes)
      if (!tree.has(child) && tree.has(ppid)) {
        tree.add(child);
        grew = true;
      }
  }
  let ticks = 0;
  for (const member of tree) ticks += processes.get(member)?.ticks ?? 0;
  return ticks * TICK_MS;
}

/**
 * CPU milliseconds of this process's children that have ended and been waited for (cutime +
 * cstime): the difference around one child's run is that child's CPU time. 0 off Linux.
 */
export function endedChildrenCpuMs() {
  try {
    const fields = statFields('self');
    return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * CPU milliseconds used so far by `pid` and its live descendants, split by what they run:
 * `postgres` for PostgreSQL's processes (their command name), `other` for the rest (node).
 */
export function treeCpuSplitMs(pid) {
  const postgresPids = [];
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return { postgres: 0, other: 0 };
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('postgres')) postgresPids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  const total = treeCpuMs(pid);
  // PostgreSQL's processes are one tree under the postmaster: count each postmaster that is inside pid's tree.
  let postgres = 0;
  for (const p of postgresPids) {
    try {
      const ppid = Number(statFields(p)[1]);
      if (!postgresPids.includes(ppid) && isDescendant(p, pid)) postgres += treeCpuMs(p);
    } catch {
      // ended meanwhile
    }
  }
  return { postgres, other: Math.max(0, total - postgres) };
}

function isDescendant(child, ancestor) {
  for (let at = child, hops = 0; at > 1 && hops < 64; hops++) {
    if (at === ancestor) return true;
    try {
      at = Number(statFields(at)[1]);
    } catch {
      return false;
    }
  }
  return false;
}
