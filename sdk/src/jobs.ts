/**
 * Waiting for a voucher job (`POST /tags/{id}/vouchers` answers 202 at once; the passes are
 * issued in the background). `waitForVoucherJob` polls the job and yields every snapshot, so a
 * caller can show progress; it ends with the snapshot whose status is `done` or `failed`.
 */
import type { ClientOfPaths } from './client.js';
import { LoyaltyError, toLoyaltyError } from './errors.js';
import type { components } from './generated/openapi.js';
import { defined } from './internal/defined.js';
import { sleep } from './internal/sleep.js';

export type VoucherJobStatus = components['schemas']['VoucherJobStatus'];

export interface WaitForVoucherJobOptions {
  /** The tag's uuid or external_reference, as used to create the job. */
  tagId: string;
  jobId: string;
  brandId: string;
  /** Time between polls. Default 1000. */
  intervalMs?: number;
  /** Give up (throw a `timeout` VoucherJobTimeoutError) this long after the first poll. Default 600 000. */
  deadlineMs?: number;
  signal?: AbortSignal;
}

/** Thrown when a voucher job is still queued or running at the deadline; the job itself goes on. */
export class VoucherJobTimeoutError extends LoyaltyError {
  /** The last snapshot seen. */
  readonly job: VoucherJobStatus | undefined;
  constructor(message: string, job: VoucherJobStatus | undefined) {
    super({ status: 0, code: 'timeout', message });
    this.job = job;
  }
}

/**
 *     for await (const job of waitForVoucherJob(client, { tagId: 'vip', jobId, brandId: 'brand-acme' })) {
 *       console.log(`${job.status} ${job.processed}/${job.total}`);
 *     }
 *
 * A failed poll (after the client's retries) throws its `LoyaltyError`.
 */
export async function* waitForVoucherJob(
  client: ClientOfPaths,
  options: WaitForVoucherJobOptions,
): AsyncGenerator<VoucherJobStatus, void, undefined> {
  const intervalMs = options.intervalMs ?? 1000;
  const deadline = Date.now() + (options.deadlineMs ?? 600_000);
  let last: VoucherJobStatus | undefined;
  for (;;) {
    const result = await client.GET('/tags/{id}/vouchers/{job}', {
      params: { path: { id: options.tagId, job: options.jobId }, query: { brand_id: options.brandId } },
      signal: options.signal,
    });
    const err = toLoyaltyError(result);
    if (err) throw err;
    last = defined(result.data, 'voucher job status');
    yield last;
    if (last.status === 'done' || last.status === 'failed') return;
    if (Date.now() + intervalMs > deadline)
      throw new VoucherJobTimeoutError(
        `Voucher job ${options.jobId} is still ${last.status} (${last.processed}/${last.total}) after ${options.deadlineMs ?? 600_000} ms`,
        last,
      );
    await sleep(intervalMs, options.signal);
  }
}
