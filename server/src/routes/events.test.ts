import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilOwnFeedHorizon } from '#test-helpers/db.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import type { Db } from '../db/pool.js';
import { sha256 } from '../lib/hash.js';
import { recordEvents, type EventType } from '../services/webhooks/events.js';

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
  await t.db.sql`
    INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
    VALUES ('multi', ${sha256('multi-secret')}, '{org-acme,org-globex}', '{webhooks.get}')`;
  await t.db.sql`INSERT INTO organizations (id, name) VALUES ('org-initech', 'Initech')`;
  await t.db.sql`
    INSERT INTO clients (client_id, secret_hash, organization_ids, abilities)
    VALUES ('initech', ${sha256('initech-secret')}, '{org-initech}', '{webhooks.get}')`;
});
afterAll(() => t.close());

type Feed = {
  data: { id: string; type: string; created_at: string; organization_id: string; data: Record<string, unknown> }[];
  next_cursor: string;
};

const emit = (db: Db = t.db.sql, type: EventType = 'member.created', organizationId = 'org-acme') =>
  recordEvents(db, [
    {
      organizationId,
      type,
      data:
        type === 'member.created'
          ? { member_id: crypto.randomUUID(), brand_id: 'brand-acme' }
          : {
              coupon_id: 'coupon-welcome',
              pass_id: crypto.randomUUID(),
              member_id: crypto.randomUUID(),
              expires_at: null,
            },
    },
  ]).then((ids) => ids[0]!);

async function feed(query = '', client = 'acme-admin'): Promise<Feed> {
  await untilOwnFeedHorizon(t.db.sql); // the feed as this file alone would see it (db.ts)
  const res = await t.inject({ method: 'GET', url: `/events${query}`, headers: await t.auth(client) });
  expect(res.statusCode, res.payload).toBe(200);
  return res.result as Feed;
}

describe('GET /events', () => {
  it('starts at the latest events, then returns only what is new after the cursor, oldest first', async () => {
    const first = [await emit(), await emit(), await emit()];
    const start = await feed('?limit=2');
    expect(start.data.map((e) => e.id)).toEqual(first.slice(1));
    expect(start.data[0]).toMatchObject({
      type: 'member.created',
      organization_id: 'org-acme',
      data: { brand_id: 'brand-acme' },
    });
    const more = [await emit(), await emit(t.db.sql, 'coupon.issued')];
    const next = await feed(`?after=${start.next_cursor}`);
    expect(next.data.map((e) => e.id)).toEqual(more);
    const none = await feed(`?after=${next.next_cursor}`);
    expect(none).toEqual({ message: 'Request successful', data: [], next_cursor: next.next_cursor });
    const onlyCoupons = await feed(`?after=${start.next_cursor}&types=coupon.issued`);
    expect(onlyCoupons.data.map((e) => e.id)).toEqual([more[1]]);
  });

  it('never skips an event that commits after a later one (the cursor waits for open transactions)', async () => {
    const { next_cursor: cursor } = await feed();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let slowId: string | undefined;
    const slow = t.db.sql.begin(async (tx) => {
      slowId = await emit(tx); // takes its sequence value first…
      await held; // …and commits last
    });
    while (!slowId) await new Promise((r) => setTimeout(r, 5));
    const fastId = await emit(); // committed, with a higher seq
    const whileOpen = await feed(`?after=${cursor}`);
    expect(whileOpen.data.map((e) => e.id)).not.toContain(fastId);
    release();
    await slow;
    const after = await feed(`?after=${whileOpen.next_cursor}`);
    expect(after.data.map((e) => e.id).sort()).toEqual([slowId, fastId].sort());
  });

  it('long-polls with wait: answers as soon as an event shows, or empty when wait runs out', async () => {
    const { next_cursor } = await feed();
    const pending = feed(`?after=${next_cursor}&wait=20`).then((res) => ({ res, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 300));
    const id = await emit();
    // The event shows once every transaction older than it has ended, another test file's too
    // (a shared PostgreSQL: CI once held one 6 s). Timed from then, not from the commit.
    await untilOwnFeedHorizon(t.db.sql);
    const shown = Date.now();
    const { res, at } = await pending;
    expect(res.data.map((e) => e.id)).toEqual([id]);
    expect(at - shown).toBeLessThan(3000);

    const quiet = Date.now();
    const empty = await feed(`?after=${res.next_cursor}&wait=1`);
    expect(empty.data).toEqual([]);
    expect(empty.next_cursor).toBe(res.next_cursor);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(900);
  });

  it('a long poll with the longest wait answers 200 (empty) before the request timeout, never 503', async () => {
    const short = await createTestServer({ requestTimeoutMs: 1500, socketTimeoutMs: 5000 });
    try {
      const res = await short.inject({
        method: 'GET',
        url: '/events?wait=30',
        headers: await short.auth('acme-admin'),
      });
      expect(res.statusCode, res.payload).toBe(200);
      expect((res.result as Feed).data).toEqual([]);
    } finally {
      await short.close();
    }
  });

  it('shows one organization only: organization_id is required with several, foreign ones are 404', async () => {
    const globexEvent = await emit(t.db.sql, 'member.created', 'org-globex');
    const acme = await feed('?limit=100');
    expect(acme.data.map((e) => e.id)).not.toContain(globexEvent);
    expect((await feed('?limit=100', 'globex-admin')).data.map((e) => e.id)).toContain(globexEvent);
    const several = await t.inject({ method: 'GET', url: '/events', headers: await t.auth('multi') });
    expect(several.statusCode).toBe(422);
    expect(several.result).toMatchObject({ errors: { organization_id: [expect.any(String)] } });
    expect((await feed('?organization_id=org-globex&limit=100', 'multi')).data.map((e) => e.id)).toContain(globexEvent);
    const foreign = await t.inject({
      method: 'GET',
      url: '/events?organization_id=org-globex',
      headers: await t.auth('acme-admin'),
    });
    expect(foreign.statusCode).toBe(404);
    const bad = await t.inject({ method: 'GET', url: '/events?after=nonsense', headers: await t.auth('acme-admin') });
    expect(bad.statusCode).toBe(422);
  });

  it('starts an empty feed at a cursor that catches the first event', async () => {
    const empty = await feed('', 'initech');
    expect(empty.data).toEqual([]);
    const id = await emit(t.db.sql, 'coupon.issued', 'org-initech');
    const next = await feed(`?after=${empty.next_cursor}`, 'initech');
    expect(next.data.map((e) => e.id)).toEqual([id]);
  });
});
