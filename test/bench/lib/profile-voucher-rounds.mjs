// Profile of a voucher job (issue 17), for finding what grows faster than the members: on an
// embedded PostgreSQL with pg_stat_statements and track_io_timing, a tag of BENCH_MEMBERS
// (default 100000) members, then
//   1. the real job (graphile-worker runner, issue_voucher_round only): time, WAL and full-page
//      images written, the statements by total time (pg_stat_statements: buffers, reads, FPI);
//   2. its anchor, the rounds' SQL alone (voucher-rounds-sql.mjs) for another coupon: the same,
//      plus checkpoints, lane 0's round times by tenth of the job, relation sizes and, with
//      EXPLAIN=1, EXPLAIN (ANALYZE, BUFFERS) of lane 0's second and second-to-last rounds.
// Run after building: `node test/bench/lib/profile-voucher-rounds.mjs` (BENCH_MEMBERS=1000000: a few minutes).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
const { root, startEmbeddedPostgres, migrate, createPool, loadFixtureCatalogue, startWorker, loadConfig } =
  await import('./server-dist.mjs');
const { roundsSqlAlone } = await import('./voucher-rounds-sql.mjs');
const members = Number(process.env.BENCH_MEMBERS ?? 100_000);
const doJob = process.env.NO_JOB !== '1'; // NO_JOB=1: the anchor alone
// SUBSCRIBED=1: one coupon.issued subscription; the job is timed until every delivery exists.
const subscribed = process.env.SUBSCRIBED === '1';

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-vprof-'));
await chmod(dir, 0o755);
const dataDir = path.join(dir, 'data');
let pg = await startEmbeddedPostgres({ dataDir });
let sql = createPool(pg.url, { max: 20 });
const t = () => new Date().toISOString().slice(11, 19);
try {
  await migrate(sql, pg.url);
  await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  await sql`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`;
  await sql`ALTER SYSTEM SET track_io_timing = on`;
  await sql`ALTER SYSTEM SET log_checkpoints = on`;
  await sql.end();
  await pg.stop();
  pg = await startEmbeddedPostgres({ dataDir });
  sql = createPool(pg.url, { max: 20 });
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  console.log(
    t(),
    'version',
    (await sql`SELECT version()`)[0].version.slice(0, 30),
    'max_wal_size',
    (await sql`SHOW max_wal_size`)[0].max_wal_size,
    'checkpoint_timeout',
    (await sql`SHOW checkpoint_timeout`)[0].checkpoint_timeout,
  );
  await sql`INSERT INTO coupons (id, organization_id, brand_id, title, valid_days, active)
            VALUES ('coupon-a', 'org-acme', 'brand-acme', 'A', 30, true), ('coupon-b', 'org-acme', 'brand-acme', 'B', 30, true), ('coupon-c', 'org-acme', 'brand-acme', 'C', 30, true)`;
  const [tag] = await sql`INSERT INTO tags (organization_id, brand_id, tag, external_reference)
                          VALUES ('org-acme', 'brand-acme', 'Everyone', 'everyone') RETURNING id`;
  const s0 = performance.now();
  for (let done = 0; done < members; done += 100_000) {
    const n = Math.min(100_000, members - done);
    await sql`
    WITH m AS (
      INSERT INTO members (organization_id, email)
      SELECT 'org-acme', 'bench-' || (${done}::int + i) || '@example.test' FROM generate_series(1, ${n}::int) i RETURNING id
    ), bm AS (INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-acme', id FROM m)
    INSERT INTO tag_members (tag_id, member_id) SELECT ${tag.id}, id FROM m`;
  }
  await sql`VACUUM ANALYZE`;
  await sql`CHECKPOINT`;
  console.log(
    t(),
    `seeded ${members} in ${((performance.now() - s0) / 1000).toFixed(1)} s; load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );

  const wal = async () =>
    (
      await sql`SELECT wal_records::bigint AS rec, wal_fpi::bigint AS fpi, wal_bytes::bigint AS bytes FROM pg_stat_wal`
    )[0];
  const ckpt = async () => {
    try {
      return (await sql`SELECT num_timed::int + num_requested::int AS n FROM pg_stat_checkpointer`)[0].n;
    } catch {
      return (await sql`SELECT checkpoints_timed::int + checkpoints_req::int AS n FROM pg_stat_bgwriter`)[0].n;
    }
  };
  const runAnchor = async (fn, couponId, label) => {
    await sql`SELECT pg_stat_statements_reset()`;
    const w0 = await wal();
    const c0 = await ckpt();
    const rounds = [];
    const totalRounds = Math.ceil(members / 2 / 5000);
    const plans = [];
    const res = await fn(sql, {
      organizationId: 'org-acme',
      brandId: 'brand-acme',
      tagId: tag.id,
      couponId,
      onRound: (r) => rounds.push(r),
      explain: ({ lane, round }) =>
        process.env.EXPLAIN === '1' && lane === 0 && (round === 1 || round === totalRounds - 2),
      onPlan: (p) => plans.push(p),
    });
    const w1 = await wal();
    const c1 = await ckpt();
    console.log(
      t(),
      `anchor ${label}: ${res.seconds.toFixed(2)} s, issued ${res.issued}; load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `WAL: ${((Number(w1.bytes) - Number(w0.bytes)) / 1e6).toFixed(0)} MB, ${Number(w1.fpi) - Number(w0.fpi)} FPI, ${Number(w1.rec) - Number(w0.rec)} records; checkpoints ${c1 - c0}`,
    );
    // per-round time by decile of the job
    const lane0 = rounds.filter((r) => r.lane === 0);
    const dec = 10;
    const line = [];
    for (let d = 0; d < dec; d++) {
      const part = lane0.slice(Math.floor((d * lane0.length) / dec), Math.floor(((d + 1) * lane0.length) / dec));
      line.push((part.reduce((a, r) => a + r.ms, 0) / part.length).toFixed(0));
    }
    console.log(`lane 0 round ms by decile of the job: ${line.join(' ')}`);
    const top =
      await sql`SELECT calls, round(total_exec_time)::int AS ms, round(total_plan_time)::int AS plan_ms, shared_blks_hit AS hit, shared_blks_read AS read, shared_blks_dirtied AS dirtied, shared_blks_written AS written, round(shared_blk_read_time)::int AS read_ms, round(shared_blk_write_time)::int AS write_ms, wal_fpi, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 10`.catch(
        async () =>
          sql`SELECT calls, round(total_exec_time)::int AS ms, round(total_plan_time)::int AS plan_ms, shared_blks_hit AS hit, shared_blks_read AS read, shared_blks_dirtied AS dirtied, shared_blks_written AS written, wal_fpi, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 10`,
      );
    console.table(top);
    for (const p of plans) console.log(`--- plan\n${p}`);
    const sizes =
      await sql`SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid)) AS size FROM pg_class c WHERE c.relname ~ '^(passes|events|voucher_grants|tag_members|brand_members|members)' AND c.relkind IN ('r','i') ORDER BY pg_relation_size(c.oid) DESC LIMIT 25`;
    console.log(sizes.map((r) => `${r.relname} ${r.size}`).join('; '));
  };
  if (doJob) {
    await sql`SELECT pg_stat_statements_reset()`;
    const config = { ...loadConfig({ LOYALTY_SECRET_KEY: 'bench-only key of webhook secrets at rest' }) };
    const runner = await startWorker({
      connectionString: pg.url,
      sql,
      config,
      only: ['issue_voucher_round', 'fan_out_events'],
      pollInterval: 100,
    });
    if (subscribed)
      await sql`INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
                VALUES ('org-acme', 'http://127.0.0.1:9/unused', '{coupon.issued}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=')`;
    const wj0 = await wal();
    const started = performance.now();
    const [job] =
      await sql`INSERT INTO voucher_jobs (organization_id, brand_id, tag_id, voucher_kind, voucher_id, expiration_mode, lanes)
      VALUES ('org-acme', 'brand-acme', ${tag.id}, 'coupon', 'coupon-b', 'default', 2) RETURNING id`;
    await sql`INSERT INTO voucher_job_lanes (job_id, lane) SELECT ${job.id}, generate_series(0, 1)`;
    await sql`SELECT graphile_worker.add_job('issue_voucher_round', json_build_object('job_id', ${job.id}::uuid, 'lane', lane), job_key => 'voucher_job:' || ${job.id}::text || ':' || lane, priority => -1) FROM generate_series(0, 1) AS lane`;
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const [j] = await sql`SELECT status, issued FROM voucher_jobs WHERE id = ${job.id}`;
      const [{ n }] = subscribed ? await sql`SELECT count(*)::int AS n FROM webhook_deliveries` : [{ n: members }];
      if ((j.status === 'done' && n >= members) || j.status === 'failed') {
        console.log(
          t(),
          `job${subscribed ? ' (subscribed, until every delivery exists)' : ''}: ${((performance.now() - started) / 1000).toFixed(2)} s, ${j.status}, issued ${j.issued}; load ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')}`,
        );
        break;
      }
    }
    const wj1 = await wal();
    console.log(
      `job WAL: ${((Number(wj1.bytes) - Number(wj0.bytes)) / 1e6).toFixed(0)} MB, ${Number(wj1.fpi) - Number(wj0.fpi)} FPI`,
    );
    await runner.stop();
    const top2 =
      await sql`SELECT calls, round(total_exec_time)::int AS ms, round(total_plan_time)::int AS plan_ms, shared_blks_hit AS hit, shared_blks_read AS read, wal_fpi, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12`;
    console.table(top2);
  }
  await runAnchor(roundsSqlAlone, 'coupon-c', 'fenced (current)');
} finally {
  await sql.end({ timeout: 5 });
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
