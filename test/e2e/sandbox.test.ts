// End to end: the sandbox controls of issue 16 against the real server over HTTP, with its worker:
// the clock (pass expiry, token and idempotency-key lifetimes, webhook retries on the real default
// schedule), the reset, and each fault of the Prefer header.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../server/src/lib/dates.js';
import { recordEvents } from '../../server/src/services/webhooks/events.js';
import { claimIdempotencyKey } from '../../server/src/services/platform/idempotency.js';
import { defineLoyaltyNow } from '../../server/src/services/sandbox/sandbox-clock.js';
import type { LiveServer } from '#test-helpers/live-server.js';
import { apiOf, startSandboxServer } from '#test-helpers/sandbox-server.js';
import { until } from '#test-helpers/until.js';
import { startReceiver, type Receiver } from '#test-helpers/webhook-receiver.js';

let live: LiveServer;
let api: ReturnType<typeof apiOf>;
beforeAll(async () => {
  live = await startSandboxServer();
  api = apiOf(live);
});
afterAll(() => live?.close());

const clock = async () => (await api.call('GET', '/sandbox/clock')).body.data;
const advance = async (by: string) => {
  const res = await api.call('POST', '/sandbox/clock', { advance: by });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  api.forget(); // tokens are short-lived on the moved clock: the next call asks for a new one
  return res.body.data;
};
const newMember = async (email: string) => {
  const res = await api.call('POST', '/members', { brand_id: 'brand-acme', email });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.member_id as string;
};

describe('the clock', () => {
  it('shows now, the offset and real time; moves forward by a duration; refuses going back and bad input (422 naming the field)', async () => {
    const before = await clock();
    expect(before.offset_seconds).toBe(0);
    expect(Math.abs(Date.parse(before.now) - Date.parse(before.real_now))).toBeLessThan(1000);
    const moved = await advance('2h');
    expect(moved.offset_seconds).toBe(7200);
    expect(Date.parse(moved.now) - Date.parse(moved.real_now)).toBeCloseTo(7_200_000, -3);
    // real time keeps running from the new point
    await new Promise((r) => setTimeout(r, 300));
    const later = await clock();
    expect(Date.parse(later.now)).toBeGreaterThanOrEqual(Date.parse(moved.now) + 250);

    const back = await api.call('POST', '/sandbox/clock', { set: new Date().toISOString() });
    expect(back.status).toBe(422);
    expect(back.body.errors).toHaveProperty('set');
    for (const bad of [{ advance: '-5m' }, { advance: '7w' }, { advance: '1d', set: later.now }, {}]) {
      const res = await api.call('POST', '/sandbox/clock', bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    const ahead = new Date(Date.parse(later.now) + 3_600_000).toISOString();
    const set = await api.call('POST', '/sandbox/clock', { set: ahead });
    expect(set.status).toBe(200);
    expect(Math.abs(Date.parse(set.body.data.now) - Date.parse(ahead))).toBeLessThan(1000);
    api.forget();
  });

  it("a coupon pass past its expiration date on the moved clock is expired in the API, and new passes count from the clock's today", async () => {
    const id = await newMember('expiry-clock@example.org');
    const today = (await clock()).now.slice(0, 10);
    const issued = await api.call('POST', `/members/${id}/passes`, {
      brand_id: 'brand-acme',
      coupon_id: 'coupon-welcome',
      expiration_date: today,
    });
    expect(issued.status).toBe(201);
    const statusOf = async () =>
      (await api.call('GET', `/members/${id}/coupons?brand_id=brand-acme`)).body.data.find(
        (p: { qr_code: string }) => p.qr_code === issued.body.pass_code,
      ).status;
    expect(await statusOf()).toBe('active');
    await advance('2d');
    expect(await statusOf()).toBe('expired');
    const profile = await api.call('GET', `/members/${id}?brand_id=brand-acme`);
    expect(profile.body.coupons.find((p: { pass_code: string }) => p.pass_code === issued.body.pass_code).status).toBe(
      'expired',
    );
    // a pass issued now counts valid_days (30) from the sandbox's today
    const sandboxToday = (await clock()).now.slice(0, 10);
    const next = await api.call('POST', `/members/${id}/passes`, {
      brand_id: 'brand-acme',
      coupon_id: 'coupon-welcome',
    });
    const [row] = await live.db.sql<{ expiration_date: string }[]>`
      SELECT expiration_date::text FROM passes WHERE pass_code = ${next.body.pass_code}`;
    expect(row?.expiration_date).toBe(addDays(sandboxToday, 30));
  });

  it('a token issued for 3600 s is refused after advance 2h', async () => {
    const token = await api.token('acme-admin', true);
    const get = () => fetch(`${live.url}/tags?brand_id=brand-acme`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get()).status).toBe(200); // cached by the resolver now
    await advance('2h');
    expect((await get()).status).toBe(401);
  });

  it('an Idempotency-Key replays until its 24 hours have passed on the clock, then runs again', async () => {
    // Keys are scoped to the token, and a token lives an hour: the key's later life is checked with
    // the service the plugin uses, on the same scope.
    const key = `sandbox-${Date.now()}`;
    const body = { brand_id: 'brand-acme', external_reference: 'idem-clock', tag: 'Idempotency clock' };
    const first = await api.call('POST', '/tags', body, { 'idempotency-key': key });
    const again = await api.call('POST', '/tags', body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const [row] = await live.db.sql<{ scope_hash: Buffer; request_hash: Buffer }[]>`
      SELECT scope_hash, request_hash FROM idempotency_keys ORDER BY created_at DESC LIMIT 1`;
    const claim = () =>
      claimIdempotencyKey(live.db.sql, { scope: row!.scope_hash, request: row!.request_hash, lockSeconds: 30 });
    await advance('23h');
    expect((await claim()).kind).toBe('replay');
    await advance('2h');
    expect((await claim()).kind).toBe('claimed');
  });
});

describe('webhook retries on the moved clock (the real default schedule: 30 s to the first retry)', () => {
  let receiver: Receiver;
  const arrivals: { attempt: number; at: number }[] = [];
  beforeAll(async () => {
    receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => {
        const attempt = Number(req.headers['loyalty-attempt']);
        arrivals.push({ attempt, at: Date.now() });
        res.writeHead(attempt === 1 ? 500 : 200).end();
      });
    });
  });
  afterAll(() => receiver?.close());

  it('the first attempt fails; advance 1m and the retry arrives at once, not 30 s later', async () => {
    expect(live.config.webhookRetryDelays).toEqual([30, 60, 600, 3600, 10800, 21600, 86400]);
    const sub = await api.call('POST', '/webhook-subscriptions', {
      url: `${receiver.base}/hook`,
      events: ['member.created'],
    });
    expect(sub.status).toBe(201);
    await newMember('webhook-clock@example.org');
    await until(() => arrivals.some((a) => a.attempt === 1), 15_000);
    const log = await until(async () => {
      const res = await api.call('GET', `/webhook-subscriptions/${sub.body.data.id}/deliveries`);
      const d = res.body.data?.[0];
      return d?.attempts?.length === 1 ? d : undefined;
    });
    expect(log.status).toBe('pending');
    const now = Date.parse((await clock()).now);
    expect(Date.parse(log.next_attempt_at) - now).toBeGreaterThan(20_000); // ~30 s away
    const advancedAt = Date.now();
    await advance('1m');
    const second = await until(() => arrivals.find((a) => a.attempt === 2), 10_000);
    expect(second.at - advancedAt).toBeLessThan(10_000);
    const done = await until(async () => {
      const res = await api.call('GET', `/webhook-subscriptions/${sub.body.data.id}/deliveries`);
      return res.body.data?.[0]?.status === 'delivered' ? res.body.data[0] : undefined;
    });
    expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 200]);
    expect(arrivals.filter((a) => a.attempt === 2)).toHaveLength(1); // sent once
  });
});

describe('a clock jump in the middle of deliveries', () => {
  let receiver: Receiver;
  const seen = new Map<string, number>();
  beforeAll(async () => {
    receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['loyalty-message-id']);
        seen.set(id, (seen.get(id) ?? 0) + 1);
        setTimeout(() => res.writeHead(200).end(), 150); // a slow receiver: attempts are in flight during the jumps
      });
    });
  });
  afterAll(() => receiver?.close());

  it('sends every event exactly once while the clock jumps (leases and claims are on real time)', async () => {
    const sub = await api.call('POST', '/webhook-subscriptions', {
      url: `${receiver.base}/jump`,
      events: ['member.created'],
    });
    expect(sub.status).toBe(201);
    const ids = await live.db.sql.begin((tx) =>
      recordEvents(
        tx,
        Array.from({ length: 24 }, () => ({
          organizationId: 'org-acme',
          type: 'member.created' as const,
          data: { member_id: crypto.randomUUID(), brand_id: 'brand-acme' },
        })),
      ),
    );
    await until(() => seen.size > 0, 10_000);
    for (const by of ['1m', '2h', '1d']) {
      await advance(by);
      await new Promise((r) => setTimeout(r, 150));
    }
    await until(() => ids.every((id) => seen.has(id)), 20_000);
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would arrive meanwhile
    expect(ids.map((id) => seen.get(id))).toEqual(ids.map(() => 1));
    // The last attempts are recorded once their answers (150 ms late) are in and the lane's next
    // statement has run: on a busy machine that is after the receiver saw them, so it is waited for.
    const rows = await until(async () => {
      const now = await live.db.sql<{ status: string; attempts: number }[]>`
        SELECT status, attempts FROM webhook_deliveries WHERE subscription_id = ${sub.body.data.id}`;
      return now.every((r) => r.status === 'delivered') && now;
    }, 10_000);
    expect(rows).toHaveLength(24);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual(rows.map(() => ['delivered', 1]));
  });
});

describe('faults on demand (Prefer: fault=…)', () => {
  const tagBody = (n: string) => ({ brand_id: 'brand-acme', external_reference: `fault-${n}`, tag: `Fault ${n}` });
  const tagCount = async (n: string) =>
    (await live.db.sql`SELECT count(*)::int AS n FROM tags WHERE external_reference = ${`fault-${n}`}`)[0]?.n;

  it('rate_limit: 429 with Retry-After and Preference-Applied, `times` requests, then through', async () => {
    const prefer = { prefer: 'fault=rate_limit;times=2;retry_after=3' };
    const a = await api.call('GET', '/tags?brand_id=brand-acme', undefined, prefer);
    const b = await api.call('GET', '/tags?brand_id=brand-acme', undefined, prefer);
    const c = await api.call('GET', '/tags?brand_id=brand-acme', undefined, prefer);
    expect([a.status, b.status, c.status]).toEqual([429, 429, 200]);
    expect(a.headers.get('retry-after')).toBe('3');
    expect(a.headers.get('preference-applied')).toBe('fault=rate_limit');
    expect(c.headers.get('preference-applied')).toBeNull();
    // another id starts a new count; another path is another key
    const d = await api.call('GET', '/tags?brand_id=brand-acme', undefined, {
      prefer: 'fault=rate_limit;times=2;retry_after=3;id=b',
    });
    expect(d.status).toBe(429);
  });

  it('server_error: 503 by default or the status asked for, and the request does not run', async () => {
    const a = await api.call('POST', '/tags', tagBody('se'), { prefer: 'fault=server_error' });
    const b = await api.call('POST', '/tags', tagBody('se'), { prefer: 'fault=server_error;status=500' });
    expect([a.status, b.status]).toEqual([503, 500]);
    expect(a.body).toMatchObject({ error: 'server_error' });
    expect(a.headers.get('preference-applied')).toBe('fault=server_error');
    expect(await tagCount('se')).toBe(0);
  });

  it('timeout: the answer is held for delay seconds (the client gives up first), the request does not run', async () => {
    const started = Date.now();
    const attempt = fetch(`${live.url}/tags`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await api.token()}`,
        'content-type': 'application/json',
        prefer: 'fault=timeout;delay=5',
      },
      body: JSON.stringify(tagBody('to')),
      signal: AbortSignal.timeout(700),
    });
    await expect(attempt).rejects.toThrow(/abort|timeout/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    const held = await api.call('GET', '/tags?brand_id=brand-acme', undefined, { prefer: 'fault=timeout;delay=1' });
    expect(held.status).toBe(503);
    expect(held.headers.get('preference-applied')).toBe('fault=timeout');
    expect(await tagCount('to')).toBe(0);
  });

  it('network_reset: the connection is closed without an answer, the request does not run', async () => {
    await expect(api.call('POST', '/tags', tagBody('nr'), { prefer: 'fault=network_reset' })).rejects.toThrow(
      /fetch failed|socket|reset/i,
    );
    expect(await tagCount('nr')).toBe(0);
    const through = await api.call('POST', '/tags', tagBody('nr'), { prefer: 'fault=network_reset' });
    expect(through.status).toBe(201);
  });

  it('in_progress: the request runs and stores its answer, says 409 idempotency_in_progress; the retry gets the replay', async () => {
    const headers = { prefer: 'fault=in_progress', 'idempotency-key': `ip-${Date.now()}` };
    const first = await api.call('POST', '/tags', tagBody('ip'), headers);
    expect(first.status).toBe(409);
    expect(first.body).toMatchObject({ error: 'idempotency_in_progress' });
    expect(first.headers.get('retry-after')).toBe('0');
    expect(first.headers.get('preference-applied')).toBe('fault=in_progress');
    expect(await tagCount('ip')).toBe(1);
    const retry = await api.call('POST', '/tags', tagBody('ip'), headers);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await tagCount('ip')).toBe(1);
  });

  it('a Prefer fault that is not understood is a 400 naming it; other preferences are ignored', async () => {
    const bad = await api.call('GET', '/tags?brand_id=brand-acme', undefined, { prefer: 'fault=meltdown' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/rate_limit, server_error, timeout, in_progress, network_reset/);
    const other = await api.call('GET', '/tags?brand_id=brand-acme', undefined, { prefer: 'return=minimal' });
    expect(other.status).toBe(200);
  });
});

describe('reset', () => {
  it('goes back to the fixtures (created members, deliveries and jobs gone, clock at 0, old tokens invalid), in seconds, without a restart', async () => {
    const id = await newMember('before-reset@example.org');
    const oldToken = await api.token();
    expect((await clock()).offset_seconds).toBeGreaterThan(0);
    const res = await api.call('POST', '/sandbox/reset');
    api.forget(); // the reset revoked its token: the next tests get a new one even if this one fails
    expect(res.status).toBe(200);
    expect(res.body.data.clock.offset_seconds).toBe(0);
    expect(res.body.data.took_ms).toBeLessThan(10_000);
    console.info(`sandbox reset took ${res.body.data.took_ms} ms`);
    const counts = async () =>
      (
        await live.db.sql<
          { members: number; deliveries: number; events: number; subs: number; jobs: number; clients: number }[]
        >`
        SELECT (SELECT count(*)::int FROM members) AS members, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
               (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM webhook_subscriptions) AS subs,
               (SELECT count(*)::int FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
                WHERE t.identifier IN ('deliver_webhook', 'fan_out_events', 'issue_voucher_round')) AS jobs,
               (SELECT count(*)::int FROM clients) AS clients`
      )[0];
    const empty = { members: 0, deliveries: 0, events: 0, subs: 0, jobs: 0, clients: 6 };
    // The data is gone at once. A delivery lane that was running during the reset may queue its
    // job once more when its attempt ends; that job finds no subscription and ends: jobs drain.
    expect({ ...(await counts()), jobs: 0 }).toEqual(empty);
    // A drain, not a speed: on a busy machine (test files side by side) it took longer than 45 s
    // once in CI (at 1f7c63f; it passes alone in about 1 s). A timeout names what was still there.
    let left = await counts();
    const drained = async () => {
      left = await counts();
      return JSON.stringify(left) === JSON.stringify(empty);
    };
    await until(drained, 90_000).catch((error: Error) => {
      throw new Error(`${error.message}; still there: ${JSON.stringify(left)}`);
    });
    const stale = await fetch(`${live.url}/members/${id}?brand_id=brand-acme`, {
      headers: { authorization: `Bearer ${oldToken}` },
    });
    expect(stale.status).toBe(401);
    expect((await api.call('GET', `/members/${id}?brand_id=brand-acme`)).status).toBe(404);
    expect((await api.call('GET', '/tags?brand_id=brand-acme')).status).toBe(200);
  });

  it('requests during a reset see all of it or none of it', async () => {
    await newMember('during-reset@example.org');
    const token = await api.token();
    const reads = Array.from({ length: 20 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 15)).then(
        () =>
          live.db.sql<{ members: number; clients: number }[]>`
          SELECT (SELECT count(*)::int FROM members) AS members, (SELECT count(*)::int FROM clients) AS clients`,
      ),
    );
    const reset = fetch(`${live.url}/sandbox/reset`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    const seen = (await Promise.all(reads)).map((rows) => rows[0]);
    expect((await reset).status).toBe(200);
    for (const s of seen)
      expect([
        { members: 1, clients: 6 },
        { members: 0, clients: 6 },
      ]).toContainEqual(s);
    api.forget();
  });
});

describe('LOYALTY_SANDBOX=0', () => {
  let off: LiveServer;
  beforeAll(async () => {
    off = await startSandboxServer({ sandbox: false }, { worker: false });
  });
  afterAll(() => off?.close());

  it('has no sandbox routes (404 like an unknown path) and ignores the Prefer header', async () => {
    const offApi = apiOf(off);
    for (const [method, url] of [
      ['GET', '/sandbox/clock'],
      ['POST', '/sandbox/clock'],
      ['POST', '/sandbox/reset'],
    ] as const) {
      const res = await offApi.call(method, url, method === 'POST' ? { advance: '1d' } : undefined);
      expect(res.status, `${method} ${url}`).toBe(404);
    }
    const res = await offApi.call('GET', '/tags?brand_id=brand-acme', undefined, {
      prefer: 'fault=server_error;times=5',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBeNull();
  });

  it('start-up makes loyalty_now(org) plain now() outside sandbox mode (an offset left in the table is not applied), and back', async () => {
    const sql = off.db.sql;
    await sql`INSERT INTO sandbox_clocks (organization_id, offset_seconds) VALUES ('org-acme', 86400)`;
    const ahead = async () =>
      (
        await sql<{ one: number; latest: number }[]>`
          SELECT extract(epoch FROM loyalty_now('org-acme') - now())::float8 AS one,
                 extract(epoch FROM loyalty_now_latest('{org-globex,org-acme}') - now())::float8 AS latest`
      )[0];
    await defineLoyaltyNow(sql, false);
    expect(await ahead()).toEqual({ one: 0, latest: 0 });
    const bodies = async () =>
      (
        await sql<{ src: string }[]>`
          SELECT prosrc AS src FROM pg_proc WHERE proname IN ('loyalty_now', 'loyalty_now_latest') ORDER BY oid`
      ).map((f) => f.src.trim());
    expect(await bodies()).toEqual(['SELECT now()', 'SELECT now()', 'SELECT now()']);
    await defineLoyaltyNow(sql, true);
    expect(await ahead()).toEqual({ one: 86400, latest: 86400 });
    await defineLoyaltyNow(sql, false);
    expect(await ahead()).toEqual({ one: 0, latest: 0 });
  });
});
