import type { Runner } from 'graphile-worker';
import { describeDatabaseError } from './db/outage.js';
import { defined } from './lib/defined.js';

/** Pauses before starting a runner again, growing while it keeps failing. */
const RESTART_BACKOFF_MS = [1000, 2000, 5000, 10_000];

export type SupervisedRunner = {
  stop: () => Promise<void>;
  addJob: Runner['addJob'];
  /** False from the moment the runner stopped by itself until it runs again. */
  running: () => boolean;
};

/**
 * A graphile-worker runner that is started again when it stops by itself. graphile-worker ends
 * its worker pool for good when it cannot record a job's outcome (e.g. PostgreSQL was killed
 * while a batch of completions was being written): without this, the process would keep
 * answering requests while nothing sends webhooks or issues vouchers until someone restarted it.
 * Jobs the stopped runner held are freed by the stall check (resume_stalled_jobs, at start and
 * every minute) and by their leases; start-up retries while the database is still away.
 */
export async function superviseRunner(
  name: string,
  start: () => Promise<Runner>,
  log: (line: string) => void,
): Promise<SupervisedRunner> {
  let stopping = false;
  let current = await start();
  let restarting: Promise<void> | undefined;
  let down = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const watch = (runner: Runner) => {
    runner.promise.then(
      () => onEnd(runner, 'it stopped'),
      (error: unknown) => onEnd(runner, describeDatabaseError(error)),
    );
  };
  const onEnd = (runner: Runner, why: string) => {
    if (stopping || runner !== current) return;
    down = true;
    log(`loyalty: the ${name} worker stopped (${why}); starting it again`);
    restarting = (async () => {
      for (let attempt = 0; !stopping; attempt++) {
        await sleep(
          defined(RESTART_BACKOFF_MS[Math.min(attempt, RESTART_BACKOFF_MS.length - 1)], 'the restart backoff'),
        );
        if (stopping) return;
        try {
          current = await start();
          down = false;
          watch(current);
          log(`loyalty: the ${name} worker is running again`);
          return;
        } catch {
          // the database is still away: try again after a longer pause
        }
      }
    })();
  };
  watch(current);
  return {
    addJob: (...args) => current.addJob(...args),
    running: () => !down && !stopping,
    stop: async () => {
      stopping = true;
      wake?.();
      await restarting;
      await current.stop().catch(() => {}); // a runner that ended by itself is stopped already
    },
  };
}
