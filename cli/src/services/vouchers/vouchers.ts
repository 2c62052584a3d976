// Voucher jobs: issue a coupon or storecard to everyone on a tag, and follow the job.
import type { components } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError, ExitCode, PartialSuccess, usageError } from '../../errors.js';
import { formatCount } from '../../ui/format.js';
import { voucherReporter } from '../../ui/progress-displays.js';
import { apiFailure, call } from '../common/api.js';

type JobCreated = components['schemas']['VoucherJobCreated'];
type IssueVouchersRequest = components['schemas']['IssueVouchersRequest'];
type JobStatus = components['schemas']['VoucherJobStatus'];
type Job = JobCreated | JobStatus;

export interface IssueOptions {
  tag: string;
  coupon?: string;
  storecard?: string;
  expires?: string;
  wait?: boolean;
  progress: boolean;
}

/** `never` is accepted as a friendlier spelling of the API's `no-date`. */
export function expirationDate(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === 'never' || value === 'no-date') return 'no-date';
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw usageError(`--expires must be a date YYYY-MM-DD or "never" (got "${value}").`);
  }
  return value;
}

export function voucherBody(
  brandId: string,
  options: { coupon?: string | undefined; storecard?: string | undefined; expires?: string | undefined },
): IssueVouchersRequest {
  const { coupon, storecard } = options;
  const target =
    coupon && !storecard ? { coupon_id: coupon } : storecard && !coupon ? { storecard_id: storecard } : undefined;
  if (!target) throw usageError('Pass exactly one of --coupon and --storecard.');
  const expires = expirationDate(options.expires);
  return {
    brand_id: brandId,
    ...target,
    ...(expires ? { expiration_date: expires } : {}),
  };
}

const finished = (job: Job): boolean => job.status === 'done' || job.status === 'failed';

function jobSummary(job: Job): string {
  return `job ${job.job_id} ${job.status}: ${formatCount(job.processed)} of ${formatCount(job.total)} members, issued ${formatCount(job.issued)}, skipped ${formatCount(job.skipped)}, failed ${formatCount(job.failed)}`;
}

export async function issueVouchers(ctx: Context, options: IssueOptions): Promise<void> {
  const brandId = ctx.brand();
  const body = voucherBody(brandId, options);
  const job = await call(ctx, (api, signal) =>
    api.POST('/tags/{id}/vouchers', { params: { path: { id: options.tag } }, body, signal }),
  );
  if (job.already_running) ctx.output.warn(`An equal job is already running for ${options.tag}; following that one.`);
  else ctx.output.success(`Queued voucher job ${job.job_id} for tag ${options.tag}.`);
  if (!options.wait) {
    ctx.output.result(job, () => job.job_id);
    ctx.output.info(`Follow it with: loyalty vouchers status ${job.job_id} --tag ${options.tag} --wait`);
    return;
  }
  await followJob(ctx, options.tag, brandId, job, options.progress);
}

export async function voucherStatus(
  ctx: Context,
  jobId: string,
  tag: string,
  wait: boolean,
  progress: boolean,
): Promise<void> {
  const brandId = ctx.brand();
  const job = await fetchJob(ctx, tag, brandId, jobId);
  if (!wait) {
    ctx.output.result(
      job,
      () =>
        jobSummary(job) +
        (job.started_at ? `\nstarted ${job.started_at} UTC` : '') +
        (job.finished_at ? `, finished ${job.finished_at} UTC` : ''),
    );
    return;
  }
  await followJob(ctx, tag, brandId, job, progress);
}

function fetchJob(ctx: Context, tag: string, brandId: string, jobId: string): Promise<JobStatus> {
  return call(ctx, (api, signal) =>
    api.GET('/tags/{id}/vouchers/{job}', {
      params: { path: { id: tag, job: jobId }, query: { brand_id: brandId } },
      signal,
    }),
  );
}

/** Polls the job until it is done or failed: every 0.5 s at first, slowing to every 2 s. */
async function followJob(ctx: Context, tag: string, brandId: string, first: Job, progress: boolean): Promise<void> {
  const reporter = await voucherReporter({ stream: ctx.runtime.stderr, env: ctx.runtime.env, plain: !progress }, first);
  let job: Job = first;
  reporter.update(job);
  const { waitForVoucherJob, isLoyaltyError } = await import('@loyalty/sdk');
  try {
    if (!finished(job)) {
      // A week: the job itself has no deadline, so neither does following it in practice.
      for await (const snapshot of waitForVoucherJob(ctx.client(), {
        tagId: tag,
        jobId: job.job_id,
        brandId,
        intervalMs: 1000,
        deadlineMs: 7 * 24 * 3600_000,
        signal: ctx.signal,
      })) {
        job = snapshot;
        reporter.update(job);
      }
    }
  } catch (error) {
    if (ctx.signal.aborted) {
      await reporter.finish(job);
      throw new CliError(`Stopped following job ${job.job_id}; it keeps running on the server.`, {
        exitCode: ExitCode.interrupted,
        hint: `Follow it again with: loyalty vouchers status ${job.job_id} --tag ${tag} --wait`,
      });
    }
    await reporter.finish(job);
    throw isLoyaltyError(error) ? apiFailure(ctx, error) : error;
  }
  await reporter.finish(job);
  ctx.output.result(job, () => jobSummary(job));
  if (job.status === 'failed') {
    throw new CliError(`Voucher job ${job.job_id} failed: the coupon or storecard is no longer available.`, {
      hint: 'Fix (or reactivate) the voucher, then issue again; members who already received it are skipped.',
    });
  }
  if (job.failed > 0) {
    throw new PartialSuccess(
      `${formatCount(job.failed)} members did not get the voucher.`,
      'Issue again with the same flags: failed members are retried, the others skipped.',
    );
  }
}
