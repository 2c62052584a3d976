// The anchor of the voucher benches (issue 17): "the rounds' SQL alone". The statements one voucher
// job's rounds run (server/src/services/vouchers/voucher-rounds.ts, coupon kind), sent directly with
// postgres.js: the job row and its lanes, then per lane, round after round in one transaction each,
// the lane row locked, the job and the coupon read, the lane's next members selected by keyset,
// grants + passes + `coupon.issued` events written by the same set-based statement, the lane's
// cursor and the job's counters moved on. The lanes run at once on their own connections, as the
// worker runs them. Left out: HTTP, graphile-worker (the job and round queueing, add_job, the
// fan-out job) and the status polling: what is left is what the database has to do.
import { serverModule } from './server-dist.mjs';

const { newPassCodes } = await serverModule('lib/pass-codes.js');
const { couponExpiration } = await serverModule('services/passes/passes-issue.js');
const { DEFAULT_ROUND_SIZE } = await serverModule('services/vouchers/voucher-rounds.js');
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
    await tx`SELECT active, valid_days FROM coupons WHERE id = ${couponId}`;
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
        const [coupon] = await tx`SELECT active, valid_days FROM coupons WHERE id = ${couponId}`;
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
          const codes = newPassCodes(batch.length);
          const expiration = couponExpiration(undefined, coupon.valid_days);
          const rows = await tx.savepoint(
            (sp) => sp`
            ${explain ? sp.unsafe('EXPLAIN (ANALYZE, BUFFERS) ') : sp``}WITH eligible AS (
              SELECT m.id FROM unnest(${batch}::uuid[]) AS m(id)
              JOIN brand_members bm ON bm.brand_id = ${brand} AND bm.member_id = m.id
            ), retried AS (
              UPDATE voucher_grants g SET job_id = ${job.id}, status = 'issued', pass_id = uuidv7(), error = NULL, updated_at = now()
              FROM eligible e
              WHERE g.tag_id = ${tag} AND g.voucher_kind = 'coupon' AND g.voucher_id = ${couponId}
                AND g.member_id = ANY(${batch}::uuid[]) AND g.member_id = e.id AND g.status = 'failed'
              RETURNING g.member_id, g.pass_id
            ), inserted AS (
              INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status, pass_id)
              SELECT ${tag}, 'coupon', ${couponId}, e.id, ${job.id}, 'issued', uuidv7()
              FROM eligible e
              WHERE NOT EXISTS (
                SELECT 1 FROM voucher_grants g
                WHERE g.tag_id = ${tag} AND g.voucher_kind = 'coupon' AND g.voucher_id = ${couponId} AND g.member_id = e.id
                OFFSET 0)
              RETURNING member_id, pass_id
            ), claimed AS (
              SELECT * FROM retried UNION ALL SELECT * FROM inserted
            ), numbered AS (
              SELECT c.member_id, c.pass_id, row_number() OVER () AS n FROM claimed c
            ), created AS (
              INSERT INTO passes (id, organization_id, brand_id, member_id, kind, coupon_id, pass_code, qr_code, expiration_date)
              SELECT n.pass_id, ${org}, ${brand}, n.member_id, 'coupon', ${couponId}, code.c, code.c, ${expiration}::date
              FROM numbered n JOIN unnest(${codes}::text[]) WITH ORDINALITY AS code(c, i) ON code.i = n.n
              RETURNING id, member_id, expiration_date
            ), emitted AS (
              INSERT INTO events (id, organization_id, type, data)
              SELECT uuidv7(), ${org}, 'coupon.issued', jsonb_build_object(
                'coupon_id', ${couponId}::text, 'pass_id', p.id, 'member_id', p.member_id,
                'expires_at', to_char(p.expiration_date, 'YYYY-MM-DD'))
              FROM created p
              RETURNING id
            )
            SELECT (SELECT count(*) FROM claimed)::int AS claimed, (SELECT count(*) FROM created)::int AS issued,
                   (SELECT array_agg(id) FROM emitted) AS event_ids`,
          );
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
