// End to end: a voucher job through the built `@loyalty/sdk` against the real reference server and
// its graphile-worker: tag, bulk add (chunked), issue, and wait with `waitForVoucherJob`.
import {
  addMembersToTag,
  createLoyaltyClient,
  importSignups,
  unwrap,
  VoucherJobTimeoutError,
  waitForVoucherJob,
  type LoyaltyClient,
  type VoucherJobStatus,
} from '@loyalty/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

const brandId = 'brand-acme';
const MEMBERS = 2600;

let live: LiveServer;
let client: LoyaltyClient;
let memberIds: string[];
const polls: string[] = [];

beforeAll(async () => {
  live = await startLiveServer();
  client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
    fetch: (request) => {
      if (request.method === 'GET' && /\/vouchers\//.test(request.url)) polls.push(request.url);
      return fetch(request);
    },
  });
  const users = Array.from({ length: MEMBERS }, (_, i) => ({ email: `v${i}@example.org`, unsubscribed: false }));
  const reports = await importSignups(client, { brandId, users });
  expect(reports.map((r) => r.ok)).toEqual([true, true]);
  memberIds = reports.flatMap((r) => Object.values(r.data!.data.new));
  expect(memberIds).toHaveLength(MEMBERS);
});
afterAll(() => live?.close());

const passesOf = async (coupon: string) =>
  (
    await live.db
      .sql`SELECT count(*)::int AS passes, count(DISTINCT member_id)::int AS members FROM passes WHERE coupon_id = ${coupon}`
  )[0];

it('tags every member in chunks, issues the coupon to the tag, and waits for the job with progress snapshots to done', async () => {
  const tag = unwrap(
    await client.POST('/tags', { body: { brand_id: brandId, external_reference: 'vip', tag: 'VIP' } }),
  ).data;

  // With a duplicate (in the first chunk) and an unknown member (in the last): skipped by the server,
  // the chunks still succeed.
  const input = [memberIds[0]!, ...memberIds, '00000000-0000-4000-8000-000000000000'];
  const added = await addMembersToTag(client, { brandId, tagId: tag.uuid, memberIds: input });
  expect(added.map((r) => [r.index, r.size, r.ok, r.status])).toEqual([
    [0, 2000, true, 200],
    [1, 602, true, 200],
  ]);
  expect(added.map((r) => r.data!.message)).toEqual(['Added 1999 members to tag', 'Added 601 members to tag']);
  const [onTag] = await live.db.sql`SELECT count(*)::int AS n FROM tag_members WHERE tag_id = ${tag.uuid}`;
  expect(onTag!.n).toBe(MEMBERS);

  const started = await client.POST('/tags/{id}/vouchers', {
    params: { path: { id: tag.uuid } },
    body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
  });
  expect(started.response.status).toBe(202);
  const job = unwrap(started);
  expect(job).toMatchObject({ status: 'queued', already_running: false, issued: 0 });

  const snapshots: VoucherJobStatus[] = [];
  for await (const s of waitForVoucherJob(client, {
    tagId: tag.uuid,
    jobId: job.job_id,
    brandId,
    intervalMs: 100,
    deadlineMs: 30_000,
  })) {
    snapshots.push(s);
  }
  expect(snapshots.length).toBe(polls.length);
  const last = snapshots.at(-1)!;
  expect(last).toMatchObject({
    job_id: job.job_id,
    status: 'done',
    total: MEMBERS,
    processed: MEMBERS,
    issued: MEMBERS,
    skipped: 0,
    failed: 0,
    has_errors: false,
  });
  expect(last.started_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  expect(last.finished_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

  // Every snapshot is consistent, and they only move forward.
  const order = { queued: 0, running: 1, done: 2, failed: 2 };
  snapshots.forEach((s, i) => {
    expect(s.job_id).toBe(job.job_id);
    expect(s.issued + s.skipped + s.failed).toBe(s.processed);
    if (s.status !== 'queued') expect(s.total).toBe(MEMBERS);
    expect(s.processed).toBeLessThanOrEqual(s.total);
    if (i > 0) {
      const prev = snapshots[i - 1]!;
      expect(order[s.status]).toBeGreaterThanOrEqual(order[prev.status]);
      expect(s.processed).toBeGreaterThanOrEqual(prev.processed);
    }
  });
  expect(snapshots.slice(0, -1).every((s) => s.status === 'queued' || s.status === 'running')).toBe(true);

  expect(await passesOf('coupon-welcome')).toEqual({ passes: MEMBERS, members: MEMBERS });
  const [row] = await live.db.sql`SELECT status, total, issued FROM voucher_jobs WHERE id = ${job.job_id}`;
  expect(row).toEqual({ status: 'done', total: MEMBERS, issued: MEMBERS });

  // Issued again through the external reference: everyone already has it, so all are skipped.
  const repeat = unwrap(
    await client.POST('/tags/{id}/vouchers', {
      params: { path: { id: 'vip' } },
      body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
    }),
  );
  let final: VoucherJobStatus | undefined;
  for await (const s of waitForVoucherJob(client, {
    tagId: 'vip',
    jobId: repeat.job_id,
    brandId,
    intervalMs: 100,
    deadlineMs: 30_000,
  }))
    final = s;
  expect(final).toMatchObject({ status: 'done', total: MEMBERS, processed: MEMBERS, issued: 0, skipped: MEMBERS });
  expect(await passesOf('coupon-welcome')).toEqual({ passes: MEMBERS, members: MEMBERS });
});

it('a job whose coupon is no longer available ends failed, and is yielded as the last snapshot', async () => {
  await live.db.sql`UPDATE coupons SET active = false WHERE id = 'coupon-welcome'`;
  try {
    const job = unwrap(
      await client.POST('/tags/{id}/vouchers', {
        params: { path: { id: 'vip' } },
        body: { brand_id: brandId, coupon_id: 'coupon-welcome', expiration_date: 'no-date' },
      }),
    );
    const snapshots: VoucherJobStatus[] = [];
    for await (const s of waitForVoucherJob(client, {
      tagId: 'vip',
      jobId: job.job_id,
      brandId,
      intervalMs: 100,
      deadlineMs: 30_000,
    }))
      snapshots.push(s);
    expect(snapshots.at(-1)).toMatchObject({ status: 'failed', issued: 0 });
  } finally {
    await live.db.sql`UPDATE coupons SET active = true WHERE id = 'coupon-welcome'`;
  }
});

it('past its deadline the wait throws a VoucherJobTimeoutError with the last snapshot; the job goes on', async () => {
  // A server without a worker: the job stays queued.
  const idle = await startLiveServer({}, { worker: false });
  try {
    const other = createLoyaltyClient({
      baseUrl: idle.url,
      clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
    });
    const member = unwrap(
      await other.POST('/members', { body: { brand_id: brandId, email: 'late@example.org', unsubscribed: false } }),
    );
    unwrap(await other.POST('/tags', { body: { brand_id: brandId, external_reference: 'late', tag: 'Late' } }));
    expect((await addMembersToTag(other, { brandId, tagId: 'late', memberIds: [member.member_id] }))[0]!.ok).toBe(true);
    const job = unwrap(
      await other.POST('/tags/{id}/vouchers', {
        params: { path: { id: 'late' } },
        body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
      }),
    );
    const seen: VoucherJobStatus[] = [];
    const started = Date.now();
    const error = await (async () => {
      for await (const s of waitForVoucherJob(other, {
        tagId: 'late',
        jobId: job.job_id,
        brandId,
        intervalMs: 100,
        deadlineMs: 450,
      }))
        seen.push(s);
    })().catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toBeInstanceOf(VoucherJobTimeoutError);
    expect(error).toMatchObject({
      code: 'timeout',
      status: 0,
      job: { job_id: job.job_id, status: 'queued', total: 0, processed: 0 },
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.every((s) => s.status === 'queued')).toBe(true);
    expect((error as VoucherJobTimeoutError).job).toEqual(seen.at(-1));
    const [row] = await idle.db.sql`SELECT status FROM voucher_jobs WHERE id = ${job.job_id}`;
    expect(row!.status).toBe('queued');
  } finally {
    await idle.close();
  }
});
