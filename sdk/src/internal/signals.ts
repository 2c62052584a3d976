/** Signals of calls without a caller's signal. */

/** Stands in for the signal of a request that cannot be aborted, so no one listens to it. */
export const neverAborted = new AbortController().signal;
/** `signal`, or undefined for the shared never-aborted one (no listeners pile up on it). */
export const abortable = (signal: AbortSignal): AbortSignal | undefined =>
  signal === neverAborted ? undefined : signal;
