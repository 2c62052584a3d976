import { describe, expect, it } from 'vitest';
import { onPacingWait, pacing, pacingNote, watchPacing } from './pacing.js';

describe('pacing', () => {
  it('counts the calls waiting for the rate limit and says for how long the oldest has waited', () => {
    const seen: number[] = [];
    const unwatch = watchPacing(() => seen.push(pacing.waiting));
    expect(pacingNote()).toBeUndefined();
    onPacingWait({ waiting: true, waitedMs: 0 });
    onPacingWait({ waiting: true, waitedMs: 0 });
    expect(pacingNote(pacing.waitingSince + 12_400)).toBe('waiting for the rate limit for 12 s');
    onPacingWait({ waiting: false, waitedMs: 12_000 });
    expect(pacingNote()).toMatch(/^waiting for the rate limit/);
    onPacingWait({ waiting: false, waitedMs: 13_000 });
    expect(pacingNote()).toBeUndefined();
    expect(pacing.waitedMs).toBe(25_000);
    expect(seen).toEqual([1, 2, 1, 0]);
    unwatch();
  });
});
