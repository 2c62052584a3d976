import type { Runner } from 'graphile-worker';
import { describe, expect, it } from 'vitest';
import { superviseRunner } from './worker-supervisor.js';

/** A stand-in for graphile-worker's Runner (a library's object, not ours): its promise settles when it ends. */
function fakeRunner() {
  let end!: (error?: Error) => void;
  const promise = new Promise<void>((resolve, reject) => (end = (error) => (error ? reject(error) : resolve())));
  promise.catch(() => {});
  let stopped = 0;
  const runner = { promise, stop: async () => void stopped++, addJob: async () => ({}) } as unknown as Runner;
  return { runner, end, stops: () => stopped };
}

describe('superviseRunner', () => {
  it('starts a runner again when it ends with an error by itself, logs both, and stops the new one', async () => {
    const made = [fakeRunner(), fakeRunner()];
    let starts = 0;
    const lines: string[] = [];
    const supervised = await superviseRunner(
      'deliveries',
      async () => made[starts++]!.runner,
      (line) => lines.push(line),
    );
    made[0]!.end(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    for (const deadline = Date.now() + 5000; starts < 2 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 20));
    expect(starts).toBe(2);
    await new Promise((r) => setTimeout(r, 0));
    expect(lines).toEqual([
      'loyalty: the deliveries worker stopped (connect ECONNREFUSED); starting it again',
      'loyalty: the deliveries worker is running again',
    ]);
    await supervised.stop();
    expect(made[1]!.stops()).toBe(1);
  });

  it('keeps trying while a start fails, and a stop meanwhile ends the trying', async () => {
    const first = fakeRunner();
    let starts = 0;
    const supervised = await superviseRunner(
      'background',
      async () => {
        if (starts++ === 0) return first.runner;
        throw new Error('the database is away');
      },
      () => {},
    );
    first.end();
    for (const deadline = Date.now() + 8000; starts < 3 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 20));
    expect(starts).toBe(3); // first run, then two failed starts (1 s and 2 s apart)
    await supervised.stop();
    const after = starts;
    await new Promise((r) => setTimeout(r, 1200));
    expect(starts).toBe(after);
  });

  it('does not start again a runner that ends because it was stopped', async () => {
    const only = fakeRunner();
    let starts = 0;
    const supervised = await superviseRunner(
      'background',
      async () => {
        starts++;
        return only.runner;
      },
      () => {},
    );
    await supervised.stop();
    only.end();
    await new Promise((r) => setTimeout(r, 1200));
    expect(starts).toBe(1);
  });
});
