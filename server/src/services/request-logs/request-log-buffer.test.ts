import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl } from '#test-helpers/closed-port.js';
import { createTestServer, type TestServer } from '#test-helpers/server.js';
import { until } from '#test-helpers/until.js';
import { demoFixturesPath } from '../../config.js';
import { createPool } from '../../db/pool.js';
import { deleteOrganizationData } from '../platform/organization-data.js';
import { resetOrganizations, resetSandbox } from '../sandbox/sandbox-reset.js';
import { createRequestLogBuffer, REQUEST_LOGS_CHANNEL, type RequestLogRow } from './request-log-buffer.js';

// Issue 29 item 4: the request log is written off the request's path, in batches, bounded.

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.close());

const row = (i: number, organization_id = 'org-acme'): RequestLogRow => ({
  organization_id,
  created_at: new Date().toISOString(),
  method: 'GET',
  route: '/tags',
  status: 200,
  duration_ms: 1,
  request_id: `buffer-${i}`,
  client_id: 'acme-admin',
  error_code: null,
});
const count = async (prefix: string): Promise<number> => {
  const [row] = await t.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM request_logs WHERE request_id LIKE ${`${prefix}%`}`;
  return row?.n ?? 0;
};

describe('the request log buffer', () => {
  it('writes rows in batches of batchRows, one notification per organization and batch', async () => {
    const heard: string[] = [];
    const listening = await t.db.sql.listen(REQUEST_LOGS_CHANNEL, (organization) => heard.push(organization));
    const buffer = createRequestLogBuffer(t.db.sql, { batchRows: 500, intervalMs: 60_000 });
    for (let i = 0; i < 1200; i++) buffer.add(row(i, i % 2 ? 'org-acme' : 'org-globex'));
    // 500 waiting rows start a flush by themselves, without the timer.
    await until(async () => (await count('buffer-')) >= 1000);
    await buffer.flush();
    expect(await count('buffer-')).toBe(1200);
    expect(buffer.stats()).toEqual({ waiting: 0, written: 1200, dropped: 0 });
    // 3 batches (500, 500, 200), each naming both organizations once.
    await until(() => heard.length >= 6);
    expect(heard.sort()).toEqual([...Array(3).fill('org-acme'), ...Array(3).fill('org-globex')]);
    await listening.unlisten();
  });

  it('writes no row of an organization that is gone (deleted or expired while the row waited)', async () => {
    const buffer = createRequestLogBuffer(t.db.sql, { intervalMs: 60_000 });
    buffer.add({ ...row(0, 'org-removed-meanwhile'), request_id: 'gone-0' });
    buffer.add({ ...row(1), request_id: 'gone-1' });
    await buffer.flush();
    const rows = await t.db.sql<{ organization_id: string }[]>`
      SELECT organization_id FROM request_logs WHERE request_id LIKE 'gone-%'`;
    expect(rows).toEqual([{ organization_id: 'org-acme' }]);
  });

  it('leaves no row behind a removal that is under way while a batch is written (it waits for it)', async () => {
    await t.db.sql`INSERT INTO organizations (id, name) VALUES ('org-removed-during', 'Removed during a flush')`;
    const buffer = createRequestLogBuffer(t.db.sql, { intervalMs: 60_000 });
    buffer.add({ ...row(0, 'org-removed-during'), request_id: 'during-0' });
    let flushed: Promise<void> | undefined;
    // The removal has deleted the organization's rows, its log included, and has not committed yet
    // when the batch is written: the batch must not land after its DELETE and outlive it.
    await t.db.sql.begin(async (tx) => {
      await deleteOrganizationData(tx, ['org-removed-during'], 'everything');
      flushed = buffer.flush();
      await new Promise((r) => setTimeout(r, 300)); // the batch's statement is under way meanwhile
    });
    await flushed;
    expect(await count('during-')).toBe(0);
  });

  it('keeps at most maxRows (and a tenth) while the database is down, dropping the oldest, and never throws', async () => {
    const down = createPool(`postgres://loyalty@${new URL(await closedPortUrl()).host}/none`, { max: 1 });
    const drops: number[] = [];
    const errors: unknown[] = [];
    const buffer = createRequestLogBuffer(down, {
      maxRows: 3,
      intervalMs: 5,
      onDrop: (n) => drops.push(n),
      onError: (e) => errors.push(e),
    });
    // Past maxRows and a tenth more (here 1 row), the oldest go, down to maxRows.
    for (let i = 0; i < 4; i++) expect(() => buffer.add(row(i))).not.toThrow();
    expect(buffer.stats()).toMatchObject({ waiting: 4, dropped: 0 });
    expect(() => buffer.add(row(4))).not.toThrow();
    await buffer.flush();
    expect(buffer.stats()).toMatchObject({ waiting: 3, written: 0, dropped: 2 });
    expect(drops.reduce((a, b) => a + b, 0)).toBe(2);
    // Reported once per outage, not per attempt.
    await buffer.flush();
    expect(errors).toHaveLength(1);
    await down.end({ timeout: 1 });
  });

  it('stays cheap when full: a row added to a full buffer costs no copy of it', async () => {
    const down = createPool(`postgres://loyalty@${new URL(await closedPortUrl()).host}/none`, { max: 1 });
    const buffer = createRequestLogBuffer(down, { maxRows: 20_000, intervalMs: 60_000 });
    for (let i = 0; i < 20_000; i++) buffer.add(row(i));
    const started = performance.now();
    for (let i = 0; i < 30_000; i++) buffer.add(row(i));
    // One copy of 20,000 rows per row added took about 1 ms a row: 30 s here.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(buffer.stats().waiting).toBeLessThanOrEqual(22_000);
    expect(buffer.stats().dropped).toBeGreaterThanOrEqual(28_000);
    await down.end({ timeout: 1 });
  });

  it("is written by the server's stop (what waits is not lost)", async () => {
    const own = await createTestServer();
    try {
      const res = await own.inject({
        method: 'GET',
        url: '/tags?brand_id=brand-acme',
        headers: { ...(await own.auth('acme-admin')), 'x-request-id': 'stop-flush' },
      });
      expect(res.statusCode).toBe(200);
      await own.server.stop();
      const rows = await own.db.sql`SELECT route, status, client_id FROM request_logs WHERE request_id = 'stop-flush'`;
      expect(rows).toEqual([{ route: '/tags', status: 200, client_id: 'acme-admin' }]);
    } finally {
      await own.db.drop();
    }
  });

  it('is not written with LOYALTY_REQUEST_LOG=off', async () => {
    const off = await createTestServer({ requestLog: false });
    try {
      const res = await off.inject({
        method: 'GET',
        url: '/tags?brand_id=brand-acme',
        headers: { ...(await off.auth('acme-admin')), 'x-request-id': 'log-off' },
      });
      expect(res.statusCode).toBe(200);
      await off.server.stop();
      expect(await off.db.sql`SELECT 1 FROM request_logs`).toHaveLength(0);
    } finally {
      await off.db.drop();
    }
  });
  // Last in the file: the resets empty this file's database.
  it("leaves out another process's waiting entries of requests answered before a sandbox reset, of one organization or the whole server", async () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const requestIds = async () =>
      (
        await t.db.sql<{ request_id: string }[]>`
        SELECT request_id FROM request_logs WHERE request_id LIKE 'reset-%' ORDER BY request_id`
      ).map((r) => r.request_id);
    // The buffer of another API process: the reset's own process writes its waiting rows first, this one cannot.
    const other = createRequestLogBuffer(t.db.sql, { intervalMs: 60_000 });
    other.add({ ...row(0, 'org-globex'), request_id: 'reset-1-globex-before' });
    other.add({ ...row(0, 'org-acme'), request_id: 'reset-1-acme-before' });
    await sleep(20);
    await resetOrganizations(t.db.sql, 'none', ['org-globex']);
    await sleep(20);
    other.add({ ...row(1, 'org-globex'), request_id: 'reset-2-globex-after' });
    await other.flush();
    // Globex's entry from before its reset is left out; acme was not reset, and its entry stays.
    expect(await requestIds()).toEqual(['reset-1-acme-before', 'reset-2-globex-after']);

    other.add({ ...row(2, 'org-acme'), request_id: 'reset-3-acme-before' });
    await sleep(20);
    await resetSandbox(t.db.sql, demoFixturesPath); // every table emptied, the organizations loaded again
    await other.flush();
    expect(await requestIds()).toEqual([]);
  });
});
