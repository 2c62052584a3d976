import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, untilOwnFeedHorizon } from '#test-helpers/db.js';
import { recordEvents, type NewEvent } from './events.js';
import { listEvents as listEventsNow } from './event-feed.js';

/** The feed as this file alone would see it: no transaction of another test file holds it back. */
const listEvents: typeof listEventsNow = async (...args) => {
  await untilOwnFeedHorizon(args[0]);
  return listEventsNow(...args);
};

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

// Twelve events in one transaction share a txid and take seq values n..n+11: ordered as text,
// "…10" would come before "…2", so these tests fail if the feed sorts its cursor as strings.
const twelve = (label: string): NewEvent[] =>
  Array.from({ length: 12 }, (_, i) => ({
    organizationId: 'org-acme',
    type: 'member.created',
    data: { member_id: `${label}-${i}`, brand_id: 'brand-acme' },
  }));

it('orders events by their numeric position, within a transaction too', async () => {
  const start = await listEvents(db.sql, 'org-acme', {});
  await db.sql.begin((tx) => recordEvents(tx, twelve('a')));
  const page = await listEvents(db.sql, 'org-acme', { after: start.next_cursor, limit: 100 });
  expect(page.data.map((e) => (e.data as { member_id: string }).member_id)).toEqual(
    twelve('a').map((e) => e.data.member_id),
  );
});

it('starts a new reader at the latest events, oldest of them first', async () => {
  await db.sql.begin((tx) => recordEvents(tx, twelve('b')));
  const latest = await listEvents(db.sql, 'org-acme', { limit: 5 });
  expect(latest.data.map((e) => (e.data as { member_id: string }).member_id)).toEqual([
    'b-7',
    'b-8',
    'b-9',
    'b-10',
    'b-11',
  ]);
});

it('reads a cursor whose txid has leading zeros as decimal (PostgreSQL would read it as octal and fail)', async () => {
  const start = await listEvents(db.sql, 'org-acme', {});
  await db.sql.begin((tx) => recordEvents(tx, twelve('c')));
  const [txid, seq] = start.next_cursor.split('.');
  const padded = await listEvents(db.sql, 'org-acme', { after: `0${txid}.${seq}`, limit: 100 });
  expect(padded.data.map((e) => (e.data as { member_id: string }).member_id)).toEqual(
    twelve('c').map((e) => e.data.member_id),
  );
  await expect(listEvents(db.sql, 'org-acme', { after: '09082112456.5359449491' })).resolves.toMatchObject({
    data: [],
  });
});
