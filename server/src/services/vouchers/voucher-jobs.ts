import type { Db } from '../../db/pool.js';
import { formatDateTime } from '../../lib/dates.js';
import { defined, firstRow } from '../../lib/defined.js';
import { notFound } from '../platform/errors.js';
import { requireBrand } from '../platform/members-scope.js';
import { couponExpiration } from '../passes/passes-issue.js';
import { findTag } from '../tags/tags.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

export type VoucherKind = 'coupon' | 'storecard';
export type VoucherJobStatus = 'queued' | 'running' | 'done' | 'failed';

export type VoucherJobRow = {
  id: string;
  status: VoucherJobStatus;
  total: number;
  processed: number;
  issued: number;
  skipped: number;
  failed: number;
  started_at: Date | null;
  finished_at: Date | null;
};

export type IssueVouchersInput = {
  brand_id: string;
  coupon_id?: string;
  storecard_id?: string;
  expiration_date?: string;
};

/**
 * POST /tags/{id}/vouchers: queues a voucher job, or returns the equal job that is still queued or
 * running. The partial unique index `voucher_jobs_one_active` decides under concurrency: the
 * INSERT either creates the job or, ON CONFLICT, locks and returns the active one (no window
 * between a check and an insert). The first round of each lane is queued in the same transaction.
 */
export async function createVoucherJob(
  db: Db,
  scope: OrganizationScope,
  tagIdOrReference: string,
  input: IssueVouchersInput,
) {
  const brand = await requireBrand(db, scope, input.brand_id);
  const tagId = (await findTag(db, scope, tagIdOrReference, brand.id)).id;
  const kind: VoucherKind = input.coupon_id !== undefined ? 'coupon' : 'storecard';
  const voucherId = defined(input.coupon_id ?? input.storecard_id, 'the coupon_id or storecard_id');
  const table = kind === 'coupon' ? db`coupons` : db`storecards`;
  // "Today" is the organization's, on its sandbox clock (real today outside sandbox mode).
  const [voucher] = await db<{ today: string }[]>`
    SELECT (loyalty_now(organization_id) AT TIME ZONE 'UTC')::date::text AS today
    FROM ${table} WHERE id = ${voucherId} AND brand_id = ${brand.id}`;
  if (!voucher) throw notFound(kind === 'coupon' ? 'Coupon' : 'Storecard');

  // The rules of issuing one pass (422 for a malformed or past date); the coupon's own default
  // (valid_days) is applied when each pass is issued. Ignored for storecards.
  let mode: 'default' | 'date' | 'none' = 'default';
  let date: string | null = null;
  if (kind === 'coupon' && input.expiration_date !== undefined) {
    date = couponExpiration(input.expiration_date, null, voucher.today);
    mode = date === null ? 'none' : 'date';
  }

  const jobs = await db<(VoucherJobRow & { inserted: boolean })[]>`
    INSERT INTO voucher_jobs AS j (organization_id, brand_id, tag_id, voucher_kind, voucher_id, expiration_mode, expiration_date, lanes)
    VALUES (${brand.organizationId}, ${brand.id}, ${tagId}, ${kind}, ${voucherId}, ${mode}, ${date}, ${VOUCHER_LANES})
    ON CONFLICT (tag_id, voucher_kind, voucher_id) WHERE status IN ('queued', 'running')
      DO UPDATE SET updated_at = j.updated_at
    RETURNING j.*, (xmax = 0) AS inserted`;
  const job = firstRow(jobs, 'the inserted or active voucher job');
  if (job.inserted) {
    await db`INSERT INTO voucher_job_lanes (job_id, lane) SELECT ${job.id}, generate_series(0, ${VOUCHER_LANES - 1}::int)`;
    await db`
      SELECT graphile_worker.add_job('issue_voucher_round', json_build_object('job_id', ${job.id}::uuid, 'lane', lane),
               job_key => 'voucher_job:' || ${job.id}::text || ':' || lane, priority => ${ROUND_PRIORITY})
      FROM generate_series(0, ${VOUCHER_LANES - 1}::int) AS lane`;
  }
  return { ...presentVoucherJob(job), already_running: !job.inserted };
}

/** GET /tags/{id}/vouchers/{job}: only through the job's own tag, brand and organization. */
export async function getVoucherJob(
  db: Db,
  scope: OrganizationScope,
  tagIdOrReference: string,
  jobId: string,
  brandId: string,
) {
  const brand = await requireBrand(db, scope, brandId);
  const tagId = (await findTag(db, scope, tagIdOrReference, brand.id)).id;
  const [job] = await db<VoucherJobRow[]>`SELECT * FROM voucher_jobs WHERE id = ${jobId} AND tag_id = ${tagId}`;
  if (!job) throw notFound('Voucher job');
  return {
    ...presentVoucherJob(job),
    started_at: job.started_at ? formatDateTime(job.started_at) : null,
    finished_at: job.finished_at ? formatDateTime(job.finished_at) : null,
  };
}

/**
 * Lanes per job: the tag's members are split in this many parts that are worked on at once (a
 * round at a time per lane), so one large job keeps two database connections busy.
 */
export const VOUCHER_LANES = 2;

/**
 * graphile-worker runs lower numbers first: rounds (and their fan-outs) go ahead of a backlog of
 * webhook attempts, which would otherwise also be scanned past on every fetch of the next round.
 */
export const ROUND_PRIORITY = -1;

/** One graphile-worker job key per lane: a re-enqueued round replaces a waiting one. */
export const roundJobKey = (jobId: string, lane: number) => `voucher_job:${jobId}:${lane}`;

function presentVoucherJob(job: VoucherJobRow) {
  return {
    success: true as const,
    job_id: job.id,
    status: job.status,
    total: job.total,
    processed: job.processed,
    issued: job.issued,
    skipped: job.skipped,
    failed: job.failed,
    has_errors: job.failed > 0,
  };
}
