import type { Sql, Tx } from '../../db/pool.js';
import { formatDate } from '../../lib/dates.js';
import { defined, firstRow } from '../../lib/defined.js';
import { newPassCodes } from '../../lib/pass-codes.js';
import { queueFanOut, recorded } from '../platform/outbox.js';
import { couponExpiration } from '../passes/passes-issue.js';
import { ROUND_PRIORITY, roundJobKey, type VoucherKind, type VoucherJobStatus } from './voucher-jobs.js';

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
  lanes: number;
  started_at: Date | null;
};

/** `today`: the organization's today on its sandbox clock (loyalty_now(org), real today outside sandbox mode). */
export type Voucher = { active: boolean; valid_days: number | null; today: string };

export type RoundOutcome =
  | { state: 'gone' }
  | { state: 'failed'; reason: string }
  | { state: 'running' | 'done'; handled: number; issued: number; failed: number };

/** Thrown when a round must be rolled back and run again (graphile-worker retries the task). */
export class RoundConflict extends Error {}

/**
 * One round of one lane of a voucher job, in one transaction: the lane's next `roundSize` tag
 * members (keyset on member_id; members on the tag when the job started), their grants, passes
 * and `coupon.issued` events written set-based, the counters moved on, and the lane's next round
 * queued. A crash anywhere rolls the whole round back; the grant row per (tag, voucher, member)
 * makes every issue exactly-once however often a round runs.
 */
export async function issueVoucherRound(
  sql: Sql,
  jobId: string,
  { lane = 0, roundSize = DEFAULT_ROUND_SIZE } = {},
): Promise<RoundOutcome> {
  const started = await startJob(sql, jobId);
  if (started.state !== 'running') return started;
  return sql.begin(async (tx) => {
    // Plan with the real arrays (a cached generic plan guesses 10 members per array), and probe
    // the indexes: voucher_grants starts empty, so the planner would scan it once per member,
    // reading the pages this very statement is filling (quadratic at 5,000 members a round).
    await tx`SET LOCAL plan_cache_mode = force_custom_plan`;
    await tx`SET LOCAL enable_seqscan = off`;
    // The lane row serializes rounds of this lane (a duplicate job waits, then sees the new cursor).
    await tx`INSERT INTO voucher_job_lanes (job_id, lane) VALUES (${jobId}, ${lane}) ON CONFLICT DO NOTHING`;
    const [laneRow] = await tx<{ last_member_id: string | null; done: boolean }[]>`
      SELECT last_member_id, done FROM voucher_job_lanes WHERE job_id = ${jobId} AND lane = ${lane} FOR UPDATE`;
    const [job] = await tx<JobRow[]>`SELECT * FROM voucher_jobs WHERE id = ${jobId}`;
    if (job?.status !== 'running') return { state: 'gone' };
    const cursor = defined(laneRow, 'the lane row of the voucher job');
    if (cursor.done) return { state: 'gone' };
    const voucher = await loadVoucher(tx, job);
    if (!voucher?.active) return failJob(tx, job);

    const batch = (
      await tx<{ member_id: string }[]>`
      SELECT member_id FROM tag_members
      WHERE tag_id = ${job.tag_id} AND created_at <= ${job.started_at}
        AND member_id > ${cursor.last_member_id ?? '00000000-0000-0000-0000-000000000000'}::uuid
        AND get_byte(uuid_send(member_id), 15) % ${job.lanes}::int = ${lane}::int
      ORDER BY member_id LIMIT ${roundSize}`
    ).map((r) => r.member_id);

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

    const laneDone = batch.length < roundSize;
    await tx`
      UPDATE voucher_job_lanes SET last_member_id = coalesce(${batch.at(-1) ?? null}::uuid, last_member_id),
        done = ${laneDone}, updated_at = now()
      WHERE job_id = ${jobId} AND lane = ${lane}`;
    // Lock the job row before reading the other lanes: whichever lane takes it last sees every
    // other lane's final round committed, and marks the job done.
    await tx`SELECT 1 FROM voucher_jobs WHERE id = ${jobId} FOR UPDATE`;
    const updated = await tx<{ status: VoucherJobStatus }[]>`
      UPDATE voucher_jobs SET
        processed = processed + ${batch.length}, issued = issued + ${issued}, failed = failed + ${failed},
        skipped = skipped + ${batch.length - issued - failed}, updated_at = now(),
        status = CASE WHEN status = 'running' AND NOT EXISTS (
                   SELECT 1 FROM voucher_job_lanes WHERE job_id = ${jobId} AND NOT done) THEN 'done' ELSE status END,
        finished_at = CASE WHEN status = 'running' AND NOT EXISTS (
                   SELECT 1 FROM voucher_job_lanes WHERE job_id = ${jobId} AND NOT done) THEN now() ELSE finished_at END
      WHERE id = ${jobId}
      RETURNING status`;
    // One fan-out job for the round's events, however many savepoints wrote them (outbox.ts).
    await queueFanOut(
      tx,
      eventIds,
      { organizationIds: [job.organization_id], types: ['coupon.issued'] },
      { priority: ROUND_PRIORITY },
    );
    if (!laneDone) await queueRound(tx, jobId, lane);
    const after = firstRow(updated, 'the updated voucher job');
    return { state: after.status === 'done' ? 'done' : 'running', handled: batch.length, issued, failed };
  });
}

/**
 * queued → running in a short transaction of its own (the lanes' first rounds wait on it only
 * briefly): `started_at`, and `total` counted now. A voucher no longer available fails the job.
 */
async function startJob(sql: Sql, jobId: string): Promise<RoundOutcome> {
  return sql.begin(async (tx) => {
    const [job] = await tx<JobRow[]>`SELECT * FROM voucher_jobs WHERE id = ${jobId}`;
    if (!job || job.status === 'done' || job.status === 'failed') return { state: 'gone' };
    if (job.status === 'running') return { state: 'running', handled: 0, issued: 0, failed: 0 };
    const [lockedRow] = await tx<JobRow[]>`SELECT * FROM voucher_jobs WHERE id = ${jobId} FOR UPDATE`;
    const locked = defined(lockedRow, 'the locked voucher job');
    if (locked.status !== 'queued')
      return locked.status === 'running' ? { state: 'running', handled: 0, issued: 0, failed: 0 } : { state: 'gone' };
    const voucher = await loadVoucher(tx, locked);
    if (!voucher?.active) return failJob(tx, locked);
    await tx`
      UPDATE voucher_jobs SET status = 'running', started_at = now(), updated_at = now(),
        total = (SELECT count(*) FROM tag_members WHERE tag_id = ${locked.tag_id} AND created_at <= now())
      WHERE id = ${jobId}`;
    return { state: 'running', handled: 0, issued: 0, failed: 0 };
  });
}

async function failJob(tx: Tx, job: JobRow): Promise<RoundOutcome> {
  const reason = `The ${job.voucher_kind} is no longer available.`;
  await tx`UPDATE voucher_jobs SET status = 'failed', error = ${reason}, started_at = coalesce(started_at, now()),
             finished_at = now(), updated_at = now() WHERE id = ${job.id} AND status IN ('queued', 'running')`;
  return { state: 'failed', reason };
}

export async function loadVoucher(
  tx: Tx,
  job: Pick<JobRow, 'voucher_kind' | 'voucher_id'>,
): Promise<Voucher | undefined> {
  const [voucher] =
    job.voucher_kind === 'coupon'
      ? await tx<Voucher[]>`
          SELECT active, valid_days, (loyalty_now(organization_id) AT TIME ZONE 'UTC')::date::text AS today
          FROM coupons WHERE id = ${job.voucher_id}`
      : await tx<Voucher[]>`
          SELECT active, NULL::integer AS valid_days, (loyalty_now(organization_id) AT TIME ZONE 'UTC')::date::text AS today
          FROM storecards WHERE id = ${job.voucher_id}`;
  return voucher;
}

/** The expiration of coupon passes issued now: as for issuing one pass to a member. */
function passExpiration(job: RoundJob, voucher: Voucher): string | null {
  if (job.expiration_mode === 'none') return null;
  if (job.expiration_mode === 'date')
    return formatDate(defined(job.expiration_date, 'the expiration date of the voucher job'));
  return couponExpiration(undefined, voucher.valid_days, voucher.today);
}

/**
 * The set-based heart of a round, one statement. Members who left the brand drop out at the
 * join; members with an `issued` grant drop out at the anti-join, a `failed` grant is taken over
 * and retried. The grant carries the new pass id, so passes and events follow from the claimed
 * rows. A storecard grant links the member's existing storecard pass instead of a new one.
 * (Plain INSERTs, no ON CONFLICT: only one job per tag and voucher is active and a lane's rounds
 * are serialized by its lane row, so nothing else writes these grants; if something did, the
 * unique violation sends the round member by member.) New ids are UUIDv7: they arrive in order,
 * which keeps the primary-key indexes' inserts at their right edge.
 */
async function issueToMembers(tx: Tx, job: JobRow, voucher: Voucher, memberIds: string[]) {
  if (job.voucher_kind === 'coupon') {
    const row = firstRow(await couponRoundStatement(tx, job, voucher, memberIds), 'the counts of the coupon round');
    if (row.claimed !== row.issued) throw new Error(`voucher round: ${row.claimed} grants but ${row.issued} passes`);
    return { issued: row.issued, eventIds: row.event_ids ?? [] };
  }
  const codes = newPassCodes(memberIds.length);
  const rows = await tx<{ claimed: number; unlinked: number }[]>`
    WITH ${claimOf(tx, job, memberIds)}, fresh AS (
      SELECT c.member_id, c.pass_id, row_number() OVER () AS n
      FROM claimed c WHERE NOT EXISTS (SELECT 1 FROM passes p WHERE p.id = c.pass_id)
    ), created AS (
      INSERT INTO passes (id, organization_id, brand_id, member_id, kind, storecard_id, pass_code, qr_code, start_date)
      SELECT f.pass_id, ${job.organization_id}, ${job.brand_id}, f.member_id, 'storecard', ${job.voucher_id}, code.c, code.c, ${voucher.today}::date
      FROM fresh f JOIN unnest(${codes}::text[]) WITH ORDINALITY AS code(c, i) ON code.i = f.n
      ON CONFLICT (member_id, storecard_id) WHERE kind = 'storecard' DO NOTHING
      RETURNING id
    )
    SELECT (SELECT count(*) FROM claimed)::int AS claimed,
           (SELECT count(*) FROM fresh f WHERE f.pass_id NOT IN (SELECT id FROM created))::int AS unlinked`;
  // A storecard pass created for one of these members after this round's snapshot: run the
  // round again, it will then link that pass.
  const row = firstRow(rows, 'the counts of the storecard round');
  if (row.unlinked > 0) throw new RoundConflict('A storecard pass was created concurrently; the round will run again.');
  return { issued: row.claimed, eventIds: [] as string[] };
}

/** The columns of a voucher job that a round's statement reads. */
export type RoundJob = Pick<
  JobRow,
  | 'id'
  | 'organization_id'
  | 'brand_id'
  | 'tag_id'
  | 'voucher_kind'
  | 'voucher_id'
  | 'expiration_mode'
  | 'expiration_date'
>;

/** The CTEs `eligible`, `retried`, `inserted` and `claimed`: the grants a round claims for `memberIds`. */
function claimOf(tx: Tx, job: RoundJob, memberIds: string[]) {
  const { tag_id: tag, voucher_kind: kind, voucher_id: voucherId, id: jobId, brand_id: brand } = job;
  return tx`
    eligible AS (
      SELECT m.id FROM unnest(${memberIds}::uuid[]) AS m(id)
      JOIN brand_members bm ON bm.brand_id = ${brand} AND bm.member_id = m.id
    ), retried AS (
      UPDATE voucher_grants g SET job_id = ${jobId}, status = 'issued', pass_id = ${linkOrNew(tx, job, 'g.member_id')}, error = NULL, updated_at = now()
      FROM eligible e
      WHERE g.tag_id = ${tag} AND g.voucher_kind = ${kind} AND g.voucher_id = ${voucherId}
        AND g.member_id = ANY(${memberIds}::uuid[]) AND g.member_id = e.id AND g.status = 'failed'
      RETURNING g.member_id, g.pass_id
    ), inserted AS (
      INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status, pass_id)
      SELECT ${tag}, ${kind}, ${voucherId}, e.id, ${jobId}, 'issued', ${linkOrNew(tx, job, 'e.id')}
      FROM eligible e
      WHERE NOT EXISTS (
        -- One index probe a member: an extra member_id = ANY(<the round's ids>) here made every
        -- probe walk all of the round's keys (a rerun that skips everyone went quadratic). OFFSET 0
        -- keeps the probe a subplan: pulled up into an anti-join, it was planned as a hash of
        -- every grant of this voucher so far (the table's statistics say it is empty), read again
        -- by each round: round k hashed k × 5,000 grants (a job over 1M members: 54.5M buffer
        -- reads in its rounds' statements, 36.7M with the probe).
        SELECT 1 FROM voucher_grants g
        WHERE g.tag_id = ${tag} AND g.voucher_kind = ${kind} AND g.voucher_id = ${voucherId} AND g.member_id = e.id
        OFFSET 0)
      RETURNING member_id, pass_id
    ), claimed AS (
      SELECT * FROM retried UNION ALL SELECT * FROM inserted
    )`;
}

/**
 * A coupon round's set-based statement: the grants claimed, their passes and their `coupon.issued`
 * events (outbox.ts; the round queues their fan-out once, after its last savepoint). Exported for
 * the voucher benchmarks' anchor, which runs this very statement.
 */
export function couponRoundStatement(tx: Tx, job: RoundJob, voucher: Voucher, memberIds: string[]) {
  const codes = newPassCodes(memberIds.length);
  const { voucher_id: voucherId, organization_id: org, brand_id: brand } = job;
  const expiration = passExpiration(job, voucher);
  return tx<{ claimed: number; issued: number; event_ids: string[] | null }[]>`
      WITH ${claimOf(tx, job, memberIds)}, numbered AS (
        SELECT c.member_id, c.pass_id, row_number() OVER () AS n FROM claimed c
      ), created AS (
        INSERT INTO passes (id, organization_id, brand_id, member_id, kind, coupon_id, pass_code, qr_code, expiration_date, start_date)
        SELECT n.pass_id, ${org}, ${brand}, n.member_id, 'coupon', ${voucherId}, code.c, code.c, ${expiration}::date, ${voucher.today}::date
        FROM numbered n JOIN unnest(${codes}::text[]) WITH ORDINALITY AS code(c, i) ON code.i = n.n
        RETURNING id, member_id, expiration_date
      ), ${recorded(
        tx,
        tx`SELECT ${org}::text AS organization_id, 'coupon.issued' AS type, jsonb_build_object(
             'coupon_id', ${voucherId}::text, 'pass_id', p.id, 'member_id', p.member_id, 'brand_id', ${brand}::text,
             'expires_at', to_char(p.expiration_date, 'YYYY-MM-DD')) AS data
           FROM created p`,
      )}
      SELECT (SELECT count(*) FROM claimed)::int AS claimed, (SELECT count(*) FROM created)::int AS issued,
             (SELECT array_agg(id) FROM recorded) AS event_ids`;
}

/** The pass id a grant gets: a new one, or for storecards the member's existing storecard pass. */
function linkOrNew(tx: Tx, job: RoundJob, memberColumn: 'g.member_id' | 'e.id') {
  if (job.voucher_kind === 'coupon') return tx`uuidv7()`;
  return tx`coalesce((SELECT p.id FROM passes p WHERE p.member_id = ${tx(memberColumn)} AND p.kind = 'storecard'
                        AND p.storecard_id = ${job.voucher_id}), uuidv7())`;
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

export async function queueRound(tx: Tx | Sql, jobId: string, lane: number) {
  await tx`SELECT graphile_worker.add_job('issue_voucher_round', json_build_object('job_id', ${jobId}::uuid, 'lane', ${lane}::int),
             job_key => ${roundJobKey(jobId, lane)}, priority => ${ROUND_PRIORITY})`;
}

/**
 * Queues the next round again of lanes that have made no progress for `staleSeconds` (a worker
 * killed mid-round leaves its graphile-worker job locked for hours). Harmless when the lane is
 * in fact alive: rounds lock the lane row and grants are idempotent.
 */
export async function resumeStalledVoucherJobs(sql: Sql | Tx, staleSeconds: number): Promise<number> {
  const rows = await sql`
    SELECT graphile_worker.add_job('issue_voucher_round', json_build_object('job_id', j.id, 'lane', l.lane),
             job_key => 'voucher_job:' || j.id::text || ':' || l.lane, priority => ${ROUND_PRIORITY})
    FROM voucher_jobs j JOIN voucher_job_lanes l ON l.job_id = j.id AND NOT l.done
    WHERE j.status IN ('queued', 'running') AND l.updated_at < now() - make_interval(secs => ${staleSeconds})`;
  return rows.length;
}
