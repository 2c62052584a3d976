import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../../test/helpers/server.js';
import { until as untilTruthy } from '../../../test/helpers/until.js';
import { resumeStalledVoucherJobs } from '../services/vouchers/voucher-rounds.js';
import { startWorker } from '../worker.js';

/**
 * Exactly-once under crashes: a worker process is SIGKILLed in the middle of a round (its
 * transaction open, its graphile-worker job locked), another one takes over, and every member
 * ends up with exactly one pass.
 */

let t: TestServer;
const children: ChildProcess[] = [];
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await t.close();
});

const MEMBERS = 3000;
const ROUND = 250;

async function seedTag(reference: string, n: number) {
  const [tag] = await t.db.sql<{ id: string }[]>`
    INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES ('org-acme', 'brand-acme', ${reference}, ${reference}) RETURNING id`;
  await t.db.sql`
    WITH m AS (
      INSERT INTO members (organization_id, email)
      SELECT 'org-acme', ${reference} || '-' || i || '@example.test' FROM generate_series(1, ${n}::int) i RETURNING id
    ), bm AS (INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-acme', id FROM m)
    INSERT INTO tag_members (tag_id, member_id) SELECT ${tag!.id}, id FROM m`;
  return tag!.id;
}

function spawnWorker(): Promise<ChildProcess> {
  const dir = fileURLToPath(new URL('./test-support/', import.meta.url));
  const child = spawn(process.execPath, ['--import', `${dir}ts-hooks.mjs`, `${dir}worker-process.mjs`], {
    env: { ...process.env, DATABASE_URL: t.db.url, ROUND_SIZE: String(ROUND) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${stderr}`)));
  });
}

const post = async (payload: Record<string, unknown>) => {
  const res = await t.inject({
    method: 'POST',
    url: '/tags/crash/vouchers',
    payload,
    headers: await t.auth('acme-admin'),
  });
  expect(res.statusCode).toBe(202);
  return (res.result as { job_id: string }).job_id;
};
const jobRow = async (id: string) =>
  (
    await t.db.sql<
      { status: string; total: number; processed: number; issued: number; skipped: number; failed: number }[]
    >`
    SELECT status, total, processed, issued, skipped, failed FROM voucher_jobs WHERE id = ${id}`
  )[0]!;
const until = <T>(what: () => Promise<T | undefined | false>, timeoutMs = 30_000) => untilTruthy(what, timeoutMs, 10);

describe('issue_voucher_round under crashes', () => {
  it('issues exactly once per member when the worker is killed mid-round and another takes over; a rerun skips everyone', async () => {
    const tagId = await seedTag('crash', MEMBERS);
    // Make every round hold its transaction open for a while, so the kill lands inside one.
    // unsafe: static DDL of several statements, which the extended protocol cannot send at once.
    await t.db.sql.unsafe(`
      CREATE FUNCTION test_slow_round() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.2); RETURN NULL; END $$;
      CREATE TRIGGER test_slow_round AFTER INSERT ON voucher_grants FOR EACH STATEMENT EXECUTE FUNCTION test_slow_round();`);
    const jobId = await post({ brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });

    const first = await spawnWorker();
    await until(async () => (await jobRow(jobId)).processed >= 2 * ROUND);
    // Wait until a round is in the middle of its statement, then kill the process outright.
    await until(
      async () =>
        (
          await t.db.sql`
      SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE '%INSERT INTO voucher_grants%'
        AND pid <> pg_backend_pid()`
        ).length > 0,
    );
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    const atKill = await jobRow(jobId);
    expect(atKill.status).toBe('running');
    expect(atKill.processed).toBeLessThan(MEMBERS);
    // The killed rounds' jobs stay locked by the dead worker (graphile-worker frees it after 4 hours).
    const locked = await t.db
      .sql`SELECT 1 FROM graphile_worker.jobs WHERE task_identifier = 'issue_voucher_round' AND locked_at IS NOT NULL`;
    expect(locked.length).toBeGreaterThanOrEqual(1);

    await t.db.sql.unsafe('DROP TRIGGER test_slow_round ON voucher_grants; DROP FUNCTION test_slow_round();');
    const second = await spawnWorker();
    // What the resume_stalled_jobs task does once the job has been quiet for LOYALTY_STALLED_JOB_SECONDS.
    expect(await resumeStalledVoucherJobs(t.db.sql, 0)).toBeGreaterThanOrEqual(1);
    const done = await until(async () => {
      const row = await jobRow(jobId);
      return row.status === 'done' && row;
    });
    expect(done).toEqual({
      status: 'done',
      total: MEMBERS,
      processed: MEMBERS,
      issued: MEMBERS,
      skipped: 0,
      failed: 0,
    });

    const perMember = await t.db.sql<{ n: number; members: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT p.member_id)::int AS members
      FROM passes p JOIN tag_members tm ON tm.member_id = p.member_id AND tm.tag_id = ${tagId}
      WHERE p.coupon_id = 'coupon-welcome'`;
    expect(perMember[0]).toEqual({ n: MEMBERS, members: MEMBERS });
    const [events] = await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM events e JOIN tag_members tm ON tm.member_id = (e.data->>'member_id')::uuid AND tm.tag_id = ${tagId}
      WHERE e.type = 'coupon.issued'`;
    expect(events!.n).toBe(MEMBERS);

    const rerun = await post({ brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    expect(rerun).not.toBe(jobId);
    const skipped = await until(async () => {
      const row = await jobRow(rerun);
      return row.status === 'done' && row;
    });
    expect(skipped).toEqual({
      status: 'done',
      total: MEMBERS,
      processed: MEMBERS,
      issued: 0,
      skipped: MEMBERS,
      failed: 0,
    });
    second.kill('SIGTERM');
  }, 90_000);

  it('carries on after a graceful stop in the middle of a job', async () => {
    await seedTag('graceful', 1200);
    const res = await t.inject({
      method: 'POST',
      url: '/tags/graceful/vouchers',
      payload: { brand_id: 'brand-acme', storecard_id: 'card-points' },
      headers: await t.auth('acme-admin'),
    });
    const jobId = (res.result as { job_id: string }).job_id;
    const start = () =>
      startWorker({
        connectionString: t.db.url,
        sql: t.db.sql,
        config: t.config,
        concurrency: 2,
        pollInterval: 50,
        tasks: { roundSize: 100 },
      });
    const runner = await start();
    await until(async () => (await jobRow(jobId)).processed >= 200);
    await runner.stop();
    const stopped = await jobRow(jobId);
    expect(stopped.processed).toBeLessThan(1200);
    const again = await start();
    const done = await until(async () => {
      const row = await jobRow(jobId);
      return row.status === 'done' && row;
    });
    await again.stop();
    expect(done).toEqual({ status: 'done', total: 1200, processed: 1200, issued: 1200, skipped: 0, failed: 0 });
    const { n } = (
      await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM passes p JOIN tag_members tm ON tm.member_id = p.member_id
      JOIN tags g ON g.id = tm.tag_id AND g.external_reference = 'graceful' WHERE p.storecard_id = 'card-points'`
    )[0]!;
    expect(n).toBe(1200);
  }, 60_000);
});
