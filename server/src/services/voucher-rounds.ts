import type { Sql, Tx } from '../db/pool.js';
import { formatDate } from '../lib/dates.js';
import { newPassCodes } from '../lib/pass-codes.js';
import { couponExpiration } from './passes-issue.js';
import { roundJobKey, type VoucherKind, type VoucherJobStatus } from './voucher-jobs.js';

export const DEFAULT_ROUND_SIZE = 5000;

type JobRow = {
  id: string;
  organization_id: string;
  brand_id: string;
  tag_id: string;
  voucher_kind: VoucherKind;
  voucher_id: string;
  expiration_mode: 'default' | 'date' | 'none';
  expiration_date: Date | null;
  status: VoucherJobStatus;
  started_at: Date | null;
  last_member_id: string | null;
};

type Voucher = { active: boolean; valid_days: number | null };

export type RoundOutcome =
  | { state: 'gone' }
  | { state: 'failed'; reason: string }
  | { state: 'running' | 'done'; handled: number; issued: number; failed: number };

/** Thrown when a round must be rolled back and run again (graphile-worker retries the task). */
export class RoundConflict extends Error {}

/**
 * One round of a voucher job, in one transaction: the next `roundSize` tag members (keyset on
 * member_id, members on the tag when the job started), their grants, passes and `coupon.issued`
 * events written set-based, the counters moved on, and the next round queued. A crash anywhere
 * rolls the whole round back; the grant row per (tag, voucher, member) makes every issue
 * exactly-once however often a round runs.
 */
export async function issueVoucherRound(sql: Sql, jobId: string, { roundSize = DEFAULT_ROUND_SIZE } = {}): Promise<RoundOutcome> {
  return sql.begin(async (tx) => {
    const [job] = await tx<JobRow[]>`SELECT * FROM voucher_jobs WHERE id = ${jobId} FOR UPDATE`;
    if (!job || job.status === 'done' || job.status === 'failed') return { state: 'gone' };

    const voucher = await loadVoucher(tx, job);
    if (!voucher?.active) {
      const reason = `The ${job.voucher_kind} is no longer available.`;
      await tx`UPDATE voucher_jobs SET status = 'failed', error = ${reason}, started_at = coalesce(started_at, now()),
                 finished_at = now(), updated_at = now() WHERE id = ${job.id}`;
      return { state: 'failed', reason };
    }
    if (job.status === 'queued') {
      const [started] = await tx<{ started_at: Date }[]>`
        UPDATE voucher_jobs SET status = 'running', started_at = now(), updated_at = now(),
          total = (SELECT count(*) FROM tag_members WHERE tag_id = ${job.tag_id} AND created_at <= now())
        WHERE id = ${job.id} RETURNING started_at`;
      job.started_at = started!.started_at;
    }

    const batch = (await tx<{ member_id: string }[]>`
      SELECT member_id FROM tag_members
      WHERE tag_id = ${job.tag_id} AND created_at <= ${job.started_at}
        AND member_id > ${job.last_member_id ?? '00000000-0000-0000-0000-000000000000'}::uuid
      ORDER BY member_id LIMIT ${roundSize}`).map((r) => r.member_id);

    let issued = 0;
    let failed = 0;
    const eventIds: string[] = [];
    if (batch.length) {
      try {
        const result = await tx.savepoint((sp) => issueToMembers(sp, job, voucher, batch));
        issued = result.issued;
        eventIds.push(...result.eventIds);
      } catch (error) {
        if (!isDataError(error)) throw error;
        // Something in the set failed (a member deleted meanwhile, …): member by member, so the
        // others still get theirs and each failure is recorded for the next job to retry.
        for (const memberId of batch) {
          try {
            const result = await tx.savepoint((sp) => issueToMembers(sp, job, voucher, [memberId]));
            issued += result.issued;
            eventIds.push(...result.eventIds);
          } catch (memberError) {
            if (!isDataError(memberError)) throw memberError;
            failed += await recordFailure(tx, job, memberId, (memberError as Error).message);
          }
        }
      }
    }

    const done = batch.length < roundSize;
    await tx`
      UPDATE voucher_jobs SET
        processed = processed + ${batch.length}, issued = issued + ${issued}, failed = failed + ${failed},
        skipped = skipped + ${batch.length - issued - failed},
        last_member_id = coalesce(${batch.at(-1) ?? null}::uuid, last_member_id),
        status = ${done ? 'done' : 'running'}, finished_at = ${done ? tx`now()` : null}, updated_at = now()
      WHERE id = ${job.id}`;
    if (eventIds.length) await queueFanOut(tx, job.organization_id, eventIds);
    if (!done) await queueRound(tx, job.id);
    return { state: done ? 'done' : 'running', handled: batch.length, issued, failed };
  });
}

async function loadVoucher(tx: Tx, job: JobRow): Promise<Voucher | undefined> {
  const [voucher] = job.voucher_kind === 'coupon'
    ? await tx<Voucher[]>`SELECT active, valid_days FROM coupons WHERE id = ${job.voucher_id}`
    : await tx<Voucher[]>`SELECT active, NULL::integer AS valid_days FROM storecards WHERE id = ${job.voucher_id}`;
  return voucher;
}

/** The expiration of coupon passes issued now: as for issuing one pass to a member. */
function passExpiration(job: JobRow, voucher: Voucher): string | null {
  if (job.expiration_mode === 'none') return null;
  if (job.expiration_mode === 'date') return formatDate(job.expiration_date!);
  return couponExpiration(undefined, voucher.valid_days);
}

/**
 * The set-based heart of a round. Members who left the brand drop out at the join; members with
 * an `issued` grant drop out at ON CONFLICT (a `failed` grant is taken over and retried). The
 * grant carries the new pass id, so passes and events follow from the claimed rows in the same
 * statement. A storecard grant links the member's existing storecard pass instead.
 */
async function issueToMembers(tx: Tx, job: JobRow, voucher: Voucher, memberIds: string[]) {
  const codes = newPassCodes(memberIds.length);
  const common = { tag: job.tag_id, kind: job.voucher_kind, voucherId: job.voucher_id, jobId: job.id, org: job.organization_id, brand: job.brand_id };
  if (job.voucher_kind === 'coupon') {
    const expiration = passExpiration(job, voucher);
    const [row] = await tx<{ claimed: number; issued: number; event_ids: string[] | null }[]>`
      WITH claimed AS (
        INSERT INTO voucher_grants AS g (tag_id, voucher_kind, voucher_id, member_id, job_id, status, pass_id)
        SELECT ${common.tag}, 'coupon', ${common.voucherId}, m.id, ${common.jobId}, 'issued', gen_random_uuid()
        FROM unnest(${memberIds}::uuid[]) AS m(id)
        JOIN brand_members bm ON bm.brand_id = ${common.brand} AND bm.member_id = m.id
        ON CONFLICT (tag_id, voucher_kind, voucher_id, member_id) DO UPDATE
          SET job_id = EXCLUDED.job_id, status = 'issued', pass_id = EXCLUDED.pass_id, error = NULL, updated_at = now()
          WHERE g.status = 'failed'
        RETURNING g.member_id, g.pass_id
      ), numbered AS (
        SELECT c.member_id, c.pass_id, row_number() OVER () AS n FROM claimed c
      ), created AS (
        INSERT INTO passes (id, organization_id, brand_id, member_id, kind, coupon_id, pass_code, qr_code, expiration_date)
        SELECT n.pass_id, ${common.org}, ${common.brand}, n.member_id, 'coupon', ${common.voucherId}, code.c, code.c, ${expiration}::date
        FROM numbered n JOIN unnest(${codes}::text[]) WITH ORDINALITY AS code(c, i) ON code.i = n.n
        RETURNING id, member_id, expiration_date
      ), emitted AS (
        INSERT INTO events (organization_id, type, data)
        SELECT ${common.org}, 'coupon.issued', jsonb_build_object(
          'coupon_id', ${common.voucherId}::text, 'pass_id', p.id, 'member_id', p.member_id,
          'expires_at', to_char(p.expiration_date, 'YYYY-MM-DD'))
        FROM created p
        RETURNING id
      )
      SELECT (SELECT count(*) FROM claimed)::int AS claimed, (SELECT count(*) FROM created)::int AS issued,
             (SELECT array_agg(id) FROM emitted) AS event_ids`;
    if (row!.claimed !== row!.issued) throw new Error(`voucher round: ${row!.claimed} grants but ${row!.issued} passes`);
    return { issued: row!.issued, eventIds: row!.event_ids ?? [] };
  }

  const [row] = await tx<{ claimed: number; unlinked: number }[]>`
    WITH claimed AS (
      INSERT INTO voucher_grants AS g (tag_id, voucher_kind, voucher_id, member_id, job_id, status, pass_id)
      SELECT ${common.tag}, 'storecard', ${common.voucherId}, m.id, ${common.jobId}, 'issued', coalesce(p.id, gen_random_uuid())
      FROM unnest(${memberIds}::uuid[]) AS m(id)
      JOIN brand_members bm ON bm.brand_id = ${common.brand} AND bm.member_id = m.id
      LEFT JOIN passes p ON p.member_id = m.id AND p.kind = 'storecard' AND p.storecard_id = ${common.voucherId}
      ON CONFLICT (tag_id, voucher_kind, voucher_id, member_id) DO UPDATE
        SET job_id = EXCLUDED.job_id, status = 'issued', pass_id = EXCLUDED.pass_id, error = NULL, updated_at = now()
        WHERE g.status = 'failed'
      RETURNING g.member_id, g.pass_id
    ), fresh AS (
      SELECT c.member_id, c.pass_id, row_number() OVER () AS n
      FROM claimed c WHERE NOT EXISTS (SELECT 1 FROM passes p WHERE p.id = c.pass_id)
    ), created AS (
      INSERT INTO passes (id, organization_id, brand_id, member_id, kind, storecard_id, pass_code, qr_code)
      SELECT f.pass_id, ${common.org}, ${common.brand}, f.member_id, 'storecard', ${common.voucherId}, code.c, code.c
      FROM fresh f JOIN unnest(${codes}::text[]) WITH ORDINALITY AS code(c, i) ON code.i = f.n
      ON CONFLICT (member_id, storecard_id) WHERE kind = 'storecard' DO NOTHING
      RETURNING id
    )
    SELECT (SELECT count(*) FROM claimed)::int AS claimed,
           (SELECT count(*) FROM fresh f WHERE f.pass_id NOT IN (SELECT id FROM created))::int AS unlinked`;
  // A storecard pass created for one of these members after this round's snapshot: run the
  // round again, it will then link that pass.
  if (row!.unlinked > 0) throw new RoundConflict('A storecard pass was created concurrently; the round will run again.');
  return { issued: row!.claimed, eventIds: [] as string[] };
}

async function recordFailure(tx: Tx, job: JobRow, memberId: string, error: string): Promise<number> {
  const rows = await tx`
    INSERT INTO voucher_grants AS g (tag_id, voucher_kind, voucher_id, member_id, job_id, status, error)
    VALUES (${job.tag_id}, ${job.voucher_kind}, ${job.voucher_id}, ${memberId}, ${job.id}, 'failed', ${error.slice(0, 500)})
    ON CONFLICT (tag_id, voucher_kind, voucher_id, member_id) DO UPDATE
      SET job_id = EXCLUDED.job_id, error = EXCLUDED.error, updated_at = now()
      WHERE g.status = 'failed'
    RETURNING 1`;
  return rows.length;
}

/** SQLSTATE classes of errors caused by the data (constraint, data exception), not the connection. */
function isDataError(error: unknown): boolean {
  if (error instanceof RoundConflict) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23)/.test(code);
}

/** Same rule as recordEvents: one fan-out job per round, only when someone listens. */
async function queueFanOut(tx: Tx, organizationId: string, eventIds: string[]) {
  await tx`
    SELECT graphile_worker.add_job('fan_out_events', json_build_object('event_ids', ${eventIds}::uuid[]))
    WHERE EXISTS (
      SELECT 1 FROM webhook_subscriptions
      WHERE organization_id = ${organizationId} AND active AND events && ARRAY['coupon.issued'])`;
}

export async function queueRound(tx: Tx | Sql, jobId: string) {
  await tx`SELECT graphile_worker.add_job('issue_voucher_round', json_build_object('job_id', ${jobId}::uuid), job_key => ${roundJobKey(jobId)})`;
}

/**
 * Queues the next round again for jobs that have made no progress for `staleSeconds` (a worker
 * killed mid-round leaves its graphile-worker job locked for hours). Harmless when the job is in
 * fact alive: rounds lock the job row and grants are idempotent.
 */
export async function resumeStalledVoucherJobs(sql: Sql | Tx, staleSeconds: number): Promise<number> {
  const rows = await sql`
    SELECT graphile_worker.add_job('issue_voucher_round', json_build_object('job_id', id), job_key => 'voucher_job:' || id)
    FROM voucher_jobs
    WHERE status IN ('queued', 'running') AND updated_at < now() - make_interval(secs => ${staleSeconds})`;
  return rows.length;
}
