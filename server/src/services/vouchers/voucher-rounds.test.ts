// A voucher round's side of the outbox: its coupon.issued events are written by the round's
// set-based statement, and ONE fan-out job (at the rounds' priority) is queued per round for
// exactly that round's events, only when the organization listens to coupon.issued.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { FAN_OUT_EVENTS } from '../platform/outbox.js';
import { ROUND_PRIORITY } from './voucher-jobs.js';
import { issueVoucherRound } from './voucher-rounds.js';

let db: TestDatabase;
let tagId: string;
const MEMBERS = 7;
const ROUND = 3;
beforeAll(async () => {
  db = await createTestDatabase();
  const [tag] = await db.sql<{ id: string }[]>`
    INSERT INTO tags (organization_id, brand_id, tag, external_reference)
    VALUES ('org-acme', 'brand-acme', 'outbox', 'outbox') RETURNING id`;
  tagId = tag!.id;
  await db.sql`
    WITH m AS (
      INSERT INTO members (organization_id, email)
      SELECT 'org-acme', 'round-' || i || '@example.test' FROM generate_series(1, ${MEMBERS}::int) i RETURNING id
    ), bm AS (INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-acme', id FROM m)
    INSERT INTO tag_members (tag_id, member_id) SELECT ${tagId}, id FROM m`;
  await db.sql`
    INSERT INTO coupons (id, organization_id, brand_id, title, valid_days, active)
    VALUES ('coupon-round-a', 'org-acme', 'brand-acme', 'A', 30, true), ('coupon-round-b', 'org-acme', 'brand-acme', 'B', 30, true)`;
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.sql`DELETE FROM graphile_worker._private_jobs`;
  await db.sql`DELETE FROM webhook_subscriptions`;
});

type FanOutJob = { ids: string[]; priority: number };
const fanOutJobs = () =>
  db.sql<FanOutJob[]>`
    SELECT j.payload->'event_ids' AS ids, j.priority FROM graphile_worker._private_jobs j
    JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = ${FAN_OUT_EVENTS} ORDER BY j.id`;
const lastSeq = async () => (await db.sql<{ s: string }[]>`SELECT coalesce(max(seq), 0)::text AS s FROM events`)[0]!.s;
const issuedSince = (seq: string) =>
  db.sql<{ id: string; data: { member_id: string; coupon_id: string } }[]>`
    SELECT id, data FROM events WHERE type = 'coupon.issued' AND seq > ${seq}::bigint ORDER BY seq`;

/** Runs every round of a one-lane job of `couponId` over the tag; answers the events of each round. */
async function runJob(couponId: string) {
  const [job] = await db.sql<{ id: string }[]>`
    INSERT INTO voucher_jobs (organization_id, brand_id, tag_id, voucher_kind, voucher_id, expiration_mode, lanes)
    VALUES ('org-acme', 'brand-acme', ${tagId}, 'coupon', ${couponId}, 'default', 1) RETURNING id`;
  const rounds: { ids: string[]; jobs: FanOutJob[] }[] = [];
  for (;;) {
    const seq = await lastSeq();
    const jobsBefore = (await fanOutJobs()).length;
    const outcome = await issueVoucherRound(db.sql, job!.id, { lane: 0, roundSize: ROUND });
    if (outcome.state !== 'running' && outcome.state !== 'done') throw new Error(`round: ${JSON.stringify(outcome)}`);
    rounds.push({ ids: (await issuedSince(seq)).map((e) => e.id), jobs: (await fanOutJobs()).slice(jobsBefore) });
    if (outcome.state === 'done') return rounds;
  }
}

describe('issueVoucherRound: events and their fan-out', () => {
  it('queues one fan-out job per round, at the rounds priority, for exactly the events of that round', async () => {
    await db.sql`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
      VALUES ('org-acme', 'http://127.0.0.1:1/hook', '{coupon.issued}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=')`;
    const rounds = await runJob('coupon-round-a');
    expect(rounds.map((r) => r.ids.length)).toEqual([3, 3, 1]);
    for (const round of rounds)
      expect(round.jobs.map((j) => ({ ids: [...j.ids].sort(), priority: j.priority }))).toEqual([
        { ids: [...round.ids].sort(), priority: ROUND_PRIORITY },
      ]);
  });

  it('writes the events but queues no fan-out when nobody listens to coupon.issued', async () => {
    await db.sql`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret)
      VALUES ('org-acme', 'http://127.0.0.1:1/hook', '{member.created}', 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=')`;
    const rounds = await runJob('coupon-round-b');
    expect(rounds.flatMap((r) => r.ids)).toHaveLength(MEMBERS);
    expect(await fanOutJobs()).toEqual([]);
  });
});
