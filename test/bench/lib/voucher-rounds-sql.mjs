// The anchor of the voucher benches (issue 17): "the rounds' SQL alone". The statements one voucher
// job's rounds run (server/src/services/vouchers/voucher-rounds.ts, coupon kind), sent directly with
// postgres.js: the job row and its lanes, then per lane, round after round in one transaction each,
// the lane row locked, the job and the coupon read, the lane's next members selected by keyset,
// grants + passes + `coupon.issued` events written by the product's own set-based statement
// (couponRoundStatement, imported from server/dist: the anchor cannot drift from it), the lane's
// cursor and the job's counters moved on. The lanes run at once on their own connections, as the
// worker runs them. Left out: HTTP, graphile-worker (the job and round queueing, add_job, the
// fan-out job) and the status polling: what is left is what the database has to do.
import { serverModule } from './server-dist.mjs';

const { DEFAULT_ROUND_SIZE, couponRoundStatement, loadVoucher } = await serverModule(
  'services/vouchers/voucher-rounds.js',
);
const { VOUCHER_LANES } = await serverModule('services/vouchers/voucher-jobs.js');

/**
 * Issues `couponId` to every member of `tagId` with the rounds' statements; resolves with the
 * seconds from the first statement to the last and the counts (as the job would report them).
 * @param {import('postgres').Sql} sql a pool with at least `lanes` connections
 * Profiling: `onRound({ lane, round, ms })` after each round's commit; `explain({ lane, round })`
 * true runs that round's set-based statement under EXPLAIN (ANALYZE, BUFFERS), its plan to `onPlan`.
 * @param {{ organizationId: string, brandId: string, tagId: string, couponId: string, lanes?: number, roundSize?: number,
 *   onRound?: (r: { lane: number, round: number, ms: number }) => void,
 *   explain?: (r: { lane: number, round: number }) => boolean, onPlan?: (plan: string) => void }} o
 */
export async function roundsSqlAlone(sql, o) {
  const { organizationId: org, brandId: brand, tagId: tag, couponId } = o;
  const lanes = o.lanes ?? VOUCHER_LANES;
  const roundSize = o.roundSize ?? DEFAULT_ROUND_SIZE;
  const started = performance.now();

  const [job] = await sql`
    INSERT INTO voucher_jobs (organization_id, brand_id, tag_id, voucher_kind, voucher_id, expiration_mode, lanes)
    VALUES (${org}, ${brand}, ${tag}, 'coupon', ${couponId}, 'default', ${lanes}) RETURNING id`;
  await sql`INSERT INTO voucher_job_lanes (job_id, lane) SELECT ${job.id}, generate_series(0, ${lanes - 1}::int)`;
  await sql.begin(async (tx) => {
    await tx`SELECT * FROM voucher_jobs WHERE id = ${job.id} FOR UPDATE`;
    await loadVoucher(tx, { voucher_kind: 'coupon', voucher_id: couponId });
    await tx`
      UPDATE voucher_jobs SET status = 'running', started_at = now(), updated_at = now(),
        total = (SELECT count(*) FROM tag_members WHERE tag_id = ${tag} AND created_at <= now())
      WHERE id = ${job.id}`;
  });

  let issued = 0;
  let processed = 0;
  const lane = async (n) => {
    for (let roundNo = 0; ; roundNo++) {
      const roundStarted = performance.now();
      const explain = o.explain?.({ lane: n, round: roundNo }) ?? false;
      const more = await sql.begin(async (tx) => {
        await tx`SET LOCAL plan_cache_mode = force_custom_plan`;
        await tx`SET LOCAL enable_seqscan = off`;
        await tx`INSERT INTO voucher_job_lanes (job_id, lane) VALUES (${job.id}, ${n}) ON CONFLICT DO NOTHING`;
        const [cursor] = await tx`
          SELECT last_member_id, done FROM voucher_job_lanes WHERE job_id = ${job.id} AND lane = ${n} FOR UPDATE`;
        const [row] = await tx`SELECT * FROM voucher_jobs WHERE id = ${job.id}`;
        const voucher = await loadVoucher(tx, row);
        const batch = (
          await tx`
          SELECT member_id FROM tag_members
          WHERE tag_id = ${tag} AND created_at <= ${row.started_at}
            AND member_id > ${cursor.last_member_id ?? '00000000-0000-0000-0000-000000000000'}::uuid
            AND get_byte(uuid_send(member_id), 15) % ${lanes}::int = ${n}::int
          ORDER BY member_id LIMIT ${roundSize}`
        ).map((r) => r.member_id);
        let round = 0;
        if (batch.length) {
          // The product's own statement (voucher-rounds.ts): grants, passes and events.
          const rows = await tx.savepoint((sp) => {
            const statement = couponRoundStatement(sp, row, voucher, batch);
            return explain ? sp`EXPLAIN (ANALYZE, BUFFERS) ${statement}` : statement;
          });
          if (explain) {
            o.onPlan?.(rows.map((r) => r['QUERY PLAN']).join('\n'));
            round = batch.length;
          } else round = rows[0].issued;
        }
        const done = batch.length < roundSize;
        await tx`
          UPDATE voucher_job_lanes SET last_member_id = coalesce(${batch.at(-1) ?? null}::uuid, last_member_id),
            done = ${done}, updated_at = now()
          WHERE job_id = ${job.id} AND lane = ${n}`;
        await tx`SELECT 1 FROM voucher_jobs WHERE id = ${job.id} FOR UPDATE`;
        await tx`
          UPDATE voucher_jobs SET
            processed = processed + ${batch.length}, issued = issued + ${round},
            skipped = skipped + ${batch.length - round}, updated_at = now(),
            status = CASE WHEN status = 'running' AND NOT EXISTS (
                       SELECT 1 FROM voucher_job_lanes WHERE job_id = ${job.id} AND NOT done) THEN 'done' ELSE status END,
            finished_at = CASE WHEN status = 'running' AND NOT EXISTS (
                       SELECT 1 FROM voucher_job_lanes WHERE job_id = ${job.id} AND NOT done) THEN now() ELSE finished_at END
          WHERE id = ${job.id}
          RETURNING status`;
        issued += round;
        processed += batch.length;
        return !done;
      });
      o.onRound?.({ lane: n, round: roundNo, ms: performance.now() - roundStarted });
      if (!more) return;
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, n) => lane(n)));
  return { seconds: (performance.now() - started) / 1000, issued, processed, jobId: job.id };
}
