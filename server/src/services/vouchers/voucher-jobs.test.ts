import { run, type Runner } from '../../lib/graphile-worker.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { quietLogger } from '../../db/migrate.js';
import type { Sql } from '../../db/pool.js';
import { createTaskList } from '../../tasks/index.js';
import { addDays, todayUtc } from '../../lib/dates.js';
import { sha256 } from '../../lib/hash.js';
import type { Schemas } from '../../lib/schemas.js';

let t: TestServer;
let admin: { authorization: string };
beforeAll(async () => {
  t = await createTestServer();
  admin = await t.auth('acme-admin');
});
afterAll(() => t.close());

/** A tag of brand-acme with `n` members of the brand (and the organization). */
async function seedTag(sql: Sql, reference: string, n: number, { brand = 'brand-acme', org = 'org-acme' } = {}) {
  const [tag] = await sql<{ id: string }[]>`
    INSERT INTO tags (organization_id, brand_id, tag, external_reference) VALUES (${org}, ${brand}, ${reference}, ${reference}) RETURNING id`;
  const members = await sql<{ id: string }[]>`
    WITH m AS (
      INSERT INTO members (organization_id, email)
      SELECT ${org}, ${reference} || '-' || i || '@example.test' FROM generate_series(1, ${n}::int) i RETURNING id
    ), bm AS (INSERT INTO brand_members (brand_id, member_id) SELECT ${brand}, id FROM m)
    INSERT INTO tag_members (tag_id, member_id) SELECT ${tag!.id}, id FROM m RETURNING member_id AS id`;
  return { tagId: tag!.id, memberIds: members.map((m) => m.id) };
}

/** Runs the graphile-worker runner on the test database until `until` holds. */
async function work<T>(until: () => Promise<T | undefined>, { roundSize = 100, timeoutMs = 20_000 } = {}): Promise<T> {
  const runner: Runner = await run({
    connectionString: t.db.url,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: 50,
    logger: quietLogger,
    taskList: createTaskList({ sql: t.db.sql, config: t.config, roundSize }),
  });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await until();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error('worker did not finish in time');
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    await runner.stop();
  }
}

const post = (tag: string, payload: Record<string, unknown>, headers = admin) =>
  t.inject({ method: 'POST', url: `/tags/${encodeURIComponent(tag)}/vouchers`, payload, headers });
const status = (tag: string, job: string, brand = 'brand-acme', headers = admin) =>
  t.inject({ method: 'GET', url: `/tags/${encodeURIComponent(tag)}/vouchers/${job}?brand_id=${brand}`, headers });

type Job = Schemas['VoucherJobStatus'];
const finished = (tag: string, job: string) => async () => {
  const body = (await status(tag, job)).result as Job;
  return body.status === 'done' || body.status === 'failed' ? body : undefined;
};

describe('POST /tags/{id}/vouchers', () => {
  it('answers 202 with a queued job and zero counters, then issues one coupon pass per member in rounds', async () => {
    const { tagId, memberIds } = await seedTag(t.db.sql, 'vip', 250);
    const res = await post('vip', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' });
    expect(res.statusCode).toBe(202);
    const created = res.result as Job & { already_running: boolean };
    expect(created).toMatchObject({
      success: true,
      status: 'queued',
      total: 0,
      processed: 0,
      issued: 0,
      skipped: 0,
      failed: 0,
      has_errors: false,
      already_running: false,
    });

    const queued = (await status(tagId, created.job_id)).result as Job;
    expect(queued).toMatchObject({ status: 'queued', started_at: null, finished_at: null });

    const done = await work(finished('vip', created.job_id));
    expect(done).toMatchObject({
      status: 'done',
      total: 250,
      processed: 250,
      issued: 250,
      skipped: 0,
      failed: 0,
      has_errors: false,
    });
    expect(done.started_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(done.finished_at! >= done.started_at!).toBe(true);

    const passes = await t.db.sql<{ member_id: string; n: number; expiration_date: Date | null }[]>`
      SELECT member_id, count(*)::int AS n, max(expiration_date) AS expiration_date FROM passes
      WHERE coupon_id = 'coupon-welcome' AND member_id = ANY(${memberIds}) GROUP BY member_id`;
    expect(passes).toHaveLength(250);
    expect(passes.every((p) => p.n === 1)).toBe(true);
    // coupon-welcome has valid_days 30
    expect(passes[0]!.expiration_date!.toISOString().slice(0, 10)).toBe(addDays(todayUtc(), 30));

    const events = await t.db.sql<
      { data: { coupon_id: string; pass_id: string; member_id: string; expires_at: string | null } }[]
    >`
      SELECT data FROM events WHERE type = 'coupon.issued' AND data->>'member_id' = ANY(${memberIds})`;
    expect(events).toHaveLength(250);
    expect(events[0]!.data).toMatchObject({ coupon_id: 'coupon-welcome', expires_at: addDays(todayUtc(), 30) });
    expect(Object.keys(events[0]!.data).sort()).toEqual([
      'brand_id',
      'coupon_id',
      'expires_at',
      'member_id',
      'pass_id',
    ]);
  });

  it('skips everyone on a rerun, retries nobody twice, and skips members who left the brand', async () => {
    const { memberIds } = await seedTag(t.db.sql, 'rerun', 120);
    const first = (
      await post('rerun', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: 'no-date' })
    ).result as Job;
    await work(finished('rerun', first.job_id));
    // One newcomer on the tag, and one tag member who has left the brand (never issued).
    const extra = await seedTag(t.db.sql, 'rerun-extra', 2);
    await t.db
      .sql`INSERT INTO tag_members (tag_id, member_id) SELECT id, unnest(${extra.memberIds}::uuid[]) FROM tags WHERE external_reference = 'rerun'`;
    await t.db.sql`DELETE FROM brand_members WHERE member_id = ${extra.memberIds[1]!}`;

    const second = (await post('rerun', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' })).result as Job & {
      already_running: boolean;
    };
    expect(second.already_running).toBe(false);
    expect(second.job_id).not.toBe(first.job_id);
    const done = await work(finished('rerun', second.job_id));
    expect(done).toMatchObject({ status: 'done', total: 122, processed: 122, issued: 1, skipped: 121, failed: 0 });
    const { n } = (
      await t.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM passes WHERE coupon_id = 'coupon-welcome' AND member_id = ANY(${memberIds})`
    )[0]!;
    expect(n).toBe(120);
    const extraPasses = await t.db.sql`SELECT member_id FROM passes WHERE member_id = ANY(${extra.memberIds})`;
    expect(extraPasses.map((p) => p.member_id)).toEqual([extra.memberIds[0]]);
    const [never] = await t.db.sql<
      { expiration_date: Date | null }[]
    >`SELECT expiration_date FROM passes WHERE member_id = ${memberIds[1]!}`;
    expect(never!.expiration_date).toBeNull();
  });

  it('returns the queued or running job with already_running: true (also under concurrent calls)', async () => {
    await seedTag(t.db.sql, 'dupe', 10);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => post('dupe', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' })),
    );
    expect(results.every((r) => r.statusCode === 202)).toBe(true);
    const bodies = results.map((r) => r.result as Job & { already_running: boolean });
    expect(new Set(bodies.map((b) => b.job_id)).size).toBe(1);
    expect(bodies.filter((b) => !b.already_running)).toHaveLength(1);
    const { n } = (
      await t.db.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM voucher_jobs v JOIN tags g ON g.id = v.tag_id WHERE g.external_reference = 'dupe'`
    )[0]!;
    expect(n).toBe(1);
    // A different voucher on the same tag is a different job.
    const storecard = (await post('dupe', { brand_id: 'brand-acme', storecard_id: 'card-points' })).result as Job & {
      already_running: boolean;
    };
    expect(storecard.already_running).toBe(false);
    expect(storecard.job_id).not.toBe(bodies[0]!.job_id);
  });

  it('gives coupon passes the expiration_date sent', async () => {
    const { memberIds } = await seedTag(t.db.sql, 'dated', 3);
    const job = (
      await post('dated', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '2099-12-31' })
    ).result as Job;
    await work(finished('dated', job.job_id));
    const rows = await t.db.sql<
      { d: string }[]
    >`SELECT to_char(expiration_date, 'YYYY-MM-DD') AS d FROM passes WHERE member_id = ANY(${memberIds})`;
    expect(rows.map((r) => r.d)).toEqual(['2099-12-31', '2099-12-31', '2099-12-31']);
    const events = await t.db.sql<
      { e: string }[]
    >`SELECT data->>'expires_at' AS e FROM events WHERE data->>'member_id' = ANY(${memberIds})`;
    expect(events.map((r) => r.e)).toEqual(['2099-12-31', '2099-12-31', '2099-12-31']);
  });

  it("starts and expires coupon and storecard passes on the organization's sandbox clock (issue 25)", async () => {
    // An organization of its own, 40 days ahead: the other tests' tokens and clocks stay as they are.
    const sql = t.db.sql;
    await sql`INSERT INTO organizations (id, name) VALUES ('org-clocked', 'Clocked')`;
    await sql`INSERT INTO brands (id, organization_id, name) VALUES ('brand-clocked', 'org-clocked', 'Clocked')`;
    await sql`INSERT INTO coupons (id, organization_id, brand_id, title, valid_days) VALUES ('coupon-clocked', 'org-clocked', 'brand-clocked', 'C', 30)`;
    await sql`INSERT INTO storecards (id, organization_id, brand_id, title) VALUES ('card-clocked', 'org-clocked', 'brand-clocked', 'S')`;
    await sql`INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
              VALUES ('clocked-admin', ${sha256('clocked-admin-secret')}, '{org-clocked}', '{tags.get,tags.store}')`;
    await sql`INSERT INTO sandbox_clocks (organization_id, offset_seconds) VALUES ('org-clocked', ${40 * 86_400})`;
    const { memberIds } = await seedTag(sql, 'clocked', 2, { brand: 'brand-clocked', org: 'org-clocked' });
    const headers = await t.auth('clocked-admin');
    const today = addDays(todayUtc(), 40);
    for (const voucher of [{ coupon_id: 'coupon-clocked' }, { storecard_id: 'card-clocked' }]) {
      const job = (await post('clocked', { brand_id: 'brand-clocked', ...voucher }, headers)).result as Job;
      await work(async () => {
        const body = (await status('clocked', job.job_id, 'brand-clocked', headers)).result as Job;
        return body.status === 'done' ? body : undefined;
      });
    }
    // a date before the organization's today is in the past, as for one pass
    const past = await post(
      'clocked',
      { brand_id: 'brand-clocked', coupon_id: 'coupon-clocked', expiration_date: addDays(today, -1) },
      headers,
    );
    expect(past.statusCode).toBe(422);
    expect(JSON.parse(past.payload).errors).toHaveProperty('expiration_date');
    const rows = await sql<{ kind: string; start: string; expires: string | null }[]>`
      SELECT kind, start_date::text AS start, expiration_date::text AS expires FROM passes
      WHERE member_id = ANY(${memberIds}) ORDER BY kind`;
    expect(rows).toEqual([
      { kind: 'coupon', start: today, expires: addDays(today, 30) },
      { kind: 'coupon', start: today, expires: addDays(today, 30) },
      { kind: 'storecard', start: today, expires: null },
      { kind: 'storecard', start: today, expires: null },
    ]);
  });

  it('links a member’s existing storecard pass instead of creating a second one', async () => {
    const { memberIds } = await seedTag(t.db.sql, 'cards', 30);
    await t.db.sql`
      INSERT INTO passes (organization_id, brand_id, member_id, kind, storecard_id, pass_code, qr_code, points, balance)
      VALUES ('org-acme', 'brand-acme', ${memberIds[0]!}, 'storecard', 'card-points', 'EXISTINGCARD0001', 'EXISTINGCARD0001', 40, 40)`;
    const job = (
      await post('cards', { brand_id: 'brand-acme', storecard_id: 'card-points', expiration_date: '2001-01-01' })
    ).result as Job;
    const done = await work(finished('cards', job.job_id));
    expect(done).toMatchObject({ status: 'done', total: 30, issued: 30, skipped: 0 });
    const rows = await t.db.sql<{ member_id: string; n: number }[]>`
      SELECT member_id, count(*)::int AS n FROM passes WHERE storecard_id = 'card-points' AND member_id = ANY(${memberIds}) GROUP BY member_id`;
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const [grant] = await t.db.sql<{ pass_code: string }[]>`
      SELECT p.pass_code FROM voucher_grants g JOIN passes p ON p.id = g.pass_id WHERE g.member_id = ${memberIds[0]!}`;
    expect(grant!.pass_code).toBe('EXISTINGCARD0001');
    const { events } = (
      await t.db.sql<
        { events: number }[]
      >`SELECT count(*)::int AS events FROM events WHERE data->>'member_id' = ANY(${memberIds})`
    )[0]!;
    expect(events).toBe(0);
  });

  it('ends failed when the coupon is not (or no longer) available', async () => {
    await seedTag(t.db.sql, 'retired', 5);
    const job = (await post('retired', { brand_id: 'brand-acme', coupon_id: 'coupon-retired' })).result as Job;
    expect(job.status).toBe('queued');
    const done = await work(finished('retired', job.job_id));
    expect(done).toMatchObject({ status: 'failed', issued: 0 });
    expect(done.finished_at).not.toBeNull();
  });

  it('records members whose issue failed, reports has_errors, and retries them on the next job', async () => {
    const { memberIds } = await seedTag(t.db.sql, 'flaky', 40);
    const victim = memberIds[7]!;
    // unsafe: DDL of several statements (no parameters there); the id is a uuid this test made.
    await t.db.sql.unsafe(`
      CREATE FUNCTION test_refuse_victim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.member_id = '${victim}' THEN RAISE EXCEPTION 'refused' USING ERRCODE = '23514'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER test_refuse_victim BEFORE INSERT ON passes FOR EACH ROW EXECUTE FUNCTION test_refuse_victim();`);
    const job = (await post('flaky', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' })).result as Job;
    const done = await work(finished('flaky', job.job_id), { roundSize: 16 });
    expect(done).toMatchObject({
      status: 'done',
      total: 40,
      processed: 40,
      issued: 39,
      failed: 1,
      skipped: 0,
      has_errors: true,
    });

    await t.db.sql.unsafe('DROP TRIGGER test_refuse_victim ON passes; DROP FUNCTION test_refuse_victim();');
    const again = (await post('flaky', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' })).result as Job;
    const redone = await work(finished('flaky', again.job_id));
    expect(redone).toMatchObject({ status: 'done', issued: 1, skipped: 39, failed: 0, has_errors: false });
    const { n } = (
      await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM passes WHERE member_id = ANY(${memberIds})`
    )[0]!;
    expect(n).toBe(40);
  });

  it('validates the body: exactly one voucher, a Y-m-d or no-date expiration not in the past', async () => {
    await seedTag(t.db.sql, 'valid', 1);
    for (const payload of [
      { brand_id: 'brand-acme' },
      { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', storecard_id: 'card-points' },
      { coupon_id: 'coupon-welcome' },
      { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '31-12-2099' },
      { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '2099-02-30' },
      { brand_id: 'brand-acme', coupon_id: 'coupon-welcome', expiration_date: '2001-01-01' },
    ]) {
      const res = await post('valid', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
    }
  });

  it('answers 404 for unknown or foreign brands, tags and vouchers, and 403 without tags.store', async () => {
    await seedTag(t.db.sql, 'globex-tag', 1, { brand: 'brand-globex', org: 'org-globex' });
    await seedTag(t.db.sql, 'acme-only', 1);
    const cases: [string, Record<string, unknown>][] = [
      ['acme-only', { brand_id: 'brand-globex', coupon_id: 'coupon-globex' }],
      ['globex-tag', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' }],
      ['acme-only', { brand_id: 'brand-acme', coupon_id: 'coupon-globex' }],
      ['acme-only', { brand_id: 'brand-acme', coupon_id: 'nope' }],
      ['acme-only', { brand_id: 'brand-acme', storecard_id: 'nope' }],
      ['missing', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' }],
    ];
    for (const [tag, payload] of cases)
      expect((await post(tag, payload)).statusCode, `${tag} ${JSON.stringify(payload)}`).toBe(404);
    const readonly = await t.auth('acme-readonly');
    expect(
      (await post('acme-only', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' }, readonly)).statusCode,
    ).toBe(403);
    expect(
      (
        await post(
          'acme-only',
          { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' },
          { authorization: 'Bearer nope' },
        )
      ).statusCode,
    ).toBe(401);
  });
});

describe('GET /tags/{id}/vouchers/{job}', () => {
  it('shows a job only through its own tag, brand and organization; tags.get or tags.store is enough', async () => {
    const { tagId } = await seedTag(t.db.sql, 'seen', 1);
    await seedTag(t.db.sql, 'other', 1);
    const job = (await post('seen', { brand_id: 'brand-acme', coupon_id: 'coupon-welcome' })).result as Job;
    expect((await status('seen', job.job_id)).statusCode).toBe(200);
    expect((await status(tagId, job.job_id)).statusCode).toBe(200);
    expect((await status('seen', job.job_id, 'brand-acme', await t.auth('acme-readonly'))).statusCode).toBe(200);
    expect(
      (await status('seen', job.job_id, 'brand-acme', await t.auth('acme-admin', ['tags.store']))).statusCode,
    ).toBe(200);
    expect((await status('other', job.job_id)).statusCode).toBe(404);
    expect((await status('seen', job.job_id, 'brand-globex')).statusCode).toBe(404);
    expect((await status('seen', job.job_id, 'brand-acme', await t.auth('globex-admin'))).statusCode).toBe(404);
    expect((await status('seen', '5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170')).statusCode).toBe(404);
    expect(
      (await status('seen', job.job_id, 'brand-acme', await t.auth('acme-admin', ['members.get']))).statusCode,
    ).toBe(403);
    const noBrand = await t.inject({ method: 'GET', url: `/tags/seen/vouchers/${job.job_id}`, headers: admin });
    expect(noBrand.statusCode).toBe(422);
  });
});
