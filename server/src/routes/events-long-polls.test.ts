import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilOwnFeedHorizon } from '#test-helpers/db.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { sha256 } from '../lib/hash.js';
import { longPollStats, OPEN_POLLS_PER_CLIENT } from '../services/webhooks/event-feed.js';
import { recordEvents } from '../services/webhooks/events.js';

// Long polls (GET /events?wait=) of one tenant are not woken by another's commits, and one client
// holds at most OPEN_POLLS_PER_CLIENT of them (issue 25, finding 6). Wakeups are counted, not timed.

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
  for (const id of ['acme-poller', 'acme-poller-2'])
    await t.db.sql`
      INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
      VALUES (${id}, ${sha256(`${id}-secret`)}, '{org-acme}', '{webhooks.get}')`;
});
afterAll(() => t.close());

type Feed = { data: { id: string }[]; next_cursor: string };

const emit = (organizationId: string) =>
  recordEvents(t.db.sql, [
    {
      organizationId,
      type: 'member.created',
      data: { member_id: crypto.randomUUID(), brand_id: organizationId.replace('org-', 'brand-') },
    },
  ]).then((ids) => ids[0]!);

const poll = async (client: string, query: string) => {
  await untilOwnFeedHorizon(t.db.sql); // the feed as this file alone would see it (db.ts)
  const res = await t.inject({ method: 'GET', url: `/events${query}`, headers: await t.auth(client) });
  expect(res.statusCode, res.payload).toBe(200);
  return res.result as Feed;
};

describe('long polls', () => {
  it("wake only for their own organization's commits", async () => {
    const stats = longPollStats(t.db.sql);
    const { next_cursor } = await poll('acme-poller', '');
    const polls = Array.from({ length: OPEN_POLLS_PER_CLIENT }, () =>
      poll('acme-poller', `?after=${next_cursor}&wait=20`),
    );
    await until(() => stats.waiting('org-acme') === OPEN_POLLS_PER_CLIENT);
    const wokenBefore = stats.woken('org-acme');
    // 20 commits of another tenant, each its own notification.
    for (let i = 0; i < 20; i++) await emit('org-globex');
    const globexPolls = poll('globex-admin', `?after=${(await poll('globex-admin', '')).next_cursor}&wait=20`);
    await until(() => stats.waiting('org-globex') === 1);
    await emit('org-globex');
    expect((await globexPolls).data).toHaveLength(1);
    expect(stats.woken('org-acme')).toBe(wokenBefore);
    // Their own commit wakes all of them at once.
    const id = await emit('org-acme');
    for (const page of await Promise.all(polls)) expect(page.data.map((e) => e.id)).toEqual([id]);
    expect(stats.woken('org-acme')).toBe(wokenBefore + OPEN_POLLS_PER_CLIENT);
  });

  it('are capped per client: past the cap a poll is not woken by commits, it reads again when wait runs out', async () => {
    const stats = longPollStats(t.db.sql);
    const { next_cursor } = await poll('acme-poller', '');
    const waiting = Array.from({ length: OPEN_POLLS_PER_CLIENT }, () =>
      poll('acme-poller', `?after=${next_cursor}&wait=20`),
    );
    await until(() => stats.waiting('org-acme') === OPEN_POLLS_PER_CLIENT);
    // Another token of the same client: past the cap, so it only sleeps (nothing answered at once,
    // which would turn a listener's loop into a busy one).
    let overAnswered = false;
    const over = t
      .inject({
        method: 'GET',
        url: `/events?after=${next_cursor}&wait=8`,
        headers: { authorization: `Bearer ${await freshToken('acme-poller')}` },
      })
      .then((res) => {
        overAnswered = true;
        return res;
      });
    await until(() => stats.sleeping('org-acme') === 1);
    expect(stats.waiting('org-acme')).toBe(OPEN_POLLS_PER_CLIENT);
    // Another client of the same organization still waits.
    const other = poll('acme-poller-2', `?after=${next_cursor}&wait=20`);
    await until(() => stats.waiting('org-acme') === OPEN_POLLS_PER_CLIENT + 1);
    const wokenBefore = stats.woken('org-acme');
    const id = await emit('org-acme');
    for (const page of await Promise.all([...waiting, other])) expect(page.data.map((e) => e.id)).toEqual([id]);
    expect(stats.woken('org-acme')).toBe(wokenBefore + OPEN_POLLS_PER_CLIENT + 1);
    expect(overAnswered).toBe(false);
    // The one past the cap finds the event when its wait runs out.
    const late = await over;
    expect(late.statusCode).toBe(200);
    expect((late.result as Feed).data.map((e) => e.id)).toEqual([id]);
    expect(stats.sleeping('org-acme')).toBe(0);
  });
});

async function freshToken(clientId: string): Promise<string> {
  const res = await t.server.inject({
    method: 'POST',
    url: '/oauth/token',
    payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: `${clientId}-secret` },
  });
  return (JSON.parse(res.payload) as { access_token: string }).access_token;
}
