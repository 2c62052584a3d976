import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, TEST_SECRET_KEY, type TestServer } from '#test-helpers/server.js';
import { fanOutEvents } from '../webhooks/deliveries.js';
import { authenticationTokenOf, SANDBOX_PASS_TYPE_ID } from '../wallet/pass-identity.js';
import { recordSandboxPush } from '../wallet/wallet-pushes.js';
import { deleteOrganizationData, GLOBAL_TABLES, ORGANIZATION_TABLES } from './organization-data.js';

// Issue 25: deleteOrganizationData is the one door that removes organizations' rows. Every table
// of the schema is either deleted from or named as global; every table that holds acme's rows
// here holds none of them after, and every other row (globex's, the global ones) is exactly as
// before. A table added later without a step fails the first test; one whose rows the seed below
// cannot reach fails the second (seed it).

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true });
});
afterAll(() => t?.close());

const call = async (client: string, method: string, url: string, payload?: unknown, headers = {}) => {
  const res = await t.inject({
    method,
    url,
    headers: { ...(await t.auth(client)), ...headers },
    ...(payload !== undefined && { payload: payload as object }),
  });
  return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
};
/** A device registered for a pass's updates (Apple's web service), as Wallet does it. */
const registerDevice = async (passCode: string, device: string, pushToken: string) => {
  const [pass] = await t.db.sql<{ id: string }[]>`SELECT id FROM passes WHERE pass_code = ${passCode}`;
  const res = await t.inject({
    method: 'POST',
    url: `/wallet/apple/v1/devices/${device}/registrations/${SANDBOX_PASS_TYPE_ID}/${pass?.id}`,
    headers: { authorization: `ApplePass ${authenticationTokenOf(TEST_SECRET_KEY, pass?.id as string)}` },
    payload: { pushToken },
  });
  expect(res.statusCode).toBe(201);
};
const ok = async (p: Promise<{ status: number; body: Json }>) => {
  const res = await p;
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
};

/** Rows in every table and kind the API makes, for one organization (its admin client). */
async function seed(org: 'acme' | 'globex') {
  const client = `${org}-admin`;
  const brand = `brand-${org}`;
  const coupon = org === 'acme' ? 'coupon-welcome' : 'coupon-globex';
  const sub = (
    await ok(
      call(client, 'POST', '/webhook-subscriptions', {
        url: `https://hooks.${org}.test/a`,
        events: ['member.created'],
      }),
    )
  ).data;
  const members: string[] = [];
  for (let i = 0; i < 3; i++)
    members.push(
      (await ok(call(client, 'POST', '/members', { brand_id: brand, email: `${org}${i}@example.test` }))).member_id,
    );
  const pass = await ok(call(client, 'POST', `/members/${members[0]}/passes`, { brand_id: brand, coupon_id: coupon }));
  await registerDevice(pass.pass_code, `${org}-device`, `${org}-push`);
  await recordSandboxPush(t.db.sql, {
    organization_id: `org-${org}`,
    push_token: `${org}-push`,
    topic: SANDBOX_PASS_TYPE_ID,
  });
  const tag = (await ok(call(client, 'POST', '/tags', { brand_id: brand, tag: `${org} tag`, external_reference: org })))
    .data;
  await ok(call(client, 'POST', '/tags/members', { tag_id: tag.uuid, brand_id: brand, member_id: members[1] }));
  await ok(call(client, 'POST', '/tags/passes', { tag_id: tag.uuid, brand_id: brand, pass_code: pass.pass_code }));
  const job = {
    id: (await ok(call(client, 'POST', `/tags/${tag.uuid}/vouchers`, { brand_id: brand, coupon_id: coupon }))).job_id,
  };
  await ok(call(client, 'POST', '/sandbox/clock', { advance: '1m' }, { 'idempotency-key': `${org}-key` }));
  await call(client, 'GET', `/tags?brand_id=${brand}`, undefined, { prefer: 'fault=server_error' });
  const orgId = `org-${org}`;
  const sql = t.db.sql;
  const events = await sql<{ id: string }[]>`SELECT id FROM events WHERE organization_id = ${orgId}`;
  await fanOutEvents(
    sql,
    events.map((e) => e.id),
  );
  await sql`
    INSERT INTO webhook_attempts (delivery_id, attempt, status_code, duration_ms, attempted_at)
    SELECT d.id, 1, 500, 10, now() FROM webhook_deliveries d WHERE d.subscription_id = ${sub.id}`;
  await sql`INSERT INTO webhook_lanes (subscription_id, lane, busy_until) VALUES (${sub.id}, 0, now()) ON CONFLICT DO NOTHING`;
  await sql`
    INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status)
    VALUES (${tag.uuid}, 'coupon', ${coupon}, ${members[1] as string}, ${job.id}, 'issued')`;
  await sql`INSERT INTO voucher_job_lanes (job_id, lane) VALUES (${job.id}, 0) ON CONFLICT DO NOTHING`;
  if (org === 'acme') {
    const [order] = await sql<{ id: string }[]>`
      INSERT INTO webshop_orders (organization_id, promotion_id, device_id, member_id, off_peak_sale)
      VALUES ('org-acme', '0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10', 'device-pos-1', ${members[2] as string}, false) RETURNING id`;
    await sql`
      INSERT INTO webshop_order_codes (order_id, organization_id, product_id, code, expires_at)
      VALUES (${order?.id as string}, 'org-acme', 1, 'ACME-CODE-1', now() + interval '1 day')`;
    await ok(
      call('acme-admin', 'POST', `/members/${members[2]}/passes`, { brand_id: brand, storecard_id: 'card-points' }),
    );
    const card = await sql<
      { pass_code: string }[]
    >`SELECT pass_code FROM passes WHERE storecard_id = 'card-points' LIMIT 1`;
    // A registered storecard: the scan below queues its wallet_push job.
    await registerDevice(card[0]?.pass_code as string, 'acme-device-2', 'acme-push-2');
    await ok(
      call('acme-admin', 'POST', '/passes/scan/storecard', {
        pass_code: card[0]?.pass_code,
        points: 5,
        transaction_reference: 'tx-1',
        type: 'earn',
      }),
    );
  }
  // The request log is written in batches: its rows of the seed's requests, now.
  await t.server.plugins['loyalty-request-log-store'].buffer.flush();
}

/** Every row of every table as JSON text (and the queued jobs), by table. */
async function snapshot(): Promise<Map<string, string[]>> {
  const sql = t.db.sql;
  const tables = await sql<{ tablename: string }[]>`
    SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`;
  const all = new Map<string, string[]>();
  for (const { tablename } of tables) {
    const rows = await sql<{ j: string }[]>`SELECT row_to_json(x)::text AS j FROM ${sql(tablename)} x`;
    all.set(
      tablename,
      rows.map((r) => r.j),
    );
  }
  const jobs = await sql<{ j: string }[]>`
    SELECT json_build_object('task', t.identifier, 'payload', j.payload)::text AS j
    FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id`;
  all.set(
    'graphile_worker jobs',
    jobs.map((r) => r.j),
  );
  return all;
}

describe('deleteOrganizationData', () => {
  it('knows every table of the schema (a new table needs a step or a reason to be global)', async () => {
    const tables = (
      await t.db.sql<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`
    ).map((r) => r.tablename);
    const unknown = tables.filter((name) => !ORGANIZATION_TABLES.includes(name) && !(name in GLOBAL_TABLES));
    expect(unknown, 'tables deleteOrganizationData does not know').toEqual([]);
    expect(ORGANIZATION_TABLES.filter((name) => !tables.includes(name))).toEqual([]);
  });

  it('removes every row of acme from every table and its queued jobs, and changes no other row', async () => {
    await seed('acme');
    await seed('globex');
    const sql = t.db.sql;
    const ids = await sql<{ id: string }[]>`
      SELECT id::text FROM members WHERE organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM tags WHERE organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM passes WHERE organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM events WHERE organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM voucher_jobs WHERE organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM webhook_subscriptions WHERE organization_id = 'org-acme'
      UNION ALL SELECT d.id::text FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE s.organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM webshop_orders WHERE organization_id = 'org-acme'
      UNION ALL SELECT id::text FROM storecard_transactions WHERE organization_id = 'org-acme'`;
    // The server counts requests per token, in the bucket `token:<base64 of sha256(token + NUL)>`
    // (plugins/rate-limit.ts): the seed's requests with acme's token wrote that row.
    const acmeToken = (await t.auth('acme-admin')).authorization.replace(/^Bearer /, '');
    const acmeBucket = createHash('sha256').update(`${acmeToken}\0`).digest('base64');
    const markers = [
      ...ids.map((r) => r.id),
      acmeBucket,
      'org-acme',
      'brand-acme',
      'acme-admin',
      'acme-readonly',
      'acme-pos-1',
      'device-pos-1',
    ];
    const isAcme = (row: string) => markers.some((m) => row.includes(`"${m}"`) || row.includes(`:${m}`));
    const before = await snapshot();
    const untouched = new Map([...before].map(([table, rows]) => [table, rows.filter((r) => !isAcme(r)).sort()]));
    const seeded = [...before].filter(([, rows]) => rows.some(isAcme)).map(([table]) => table);
    // The seed reaches every table an organization has rows in (else this test proves nothing of it).
    expect(
      [...ORGANIZATION_TABLES, 'graphile_worker jobs'].filter((name) => !seeded.includes(name)).sort(),
      'tables without a row of acme before: seed them',
    ).toEqual([]);

    await sql.begin((tx) => deleteOrganizationData(tx, ['org-acme'], 'everything'));

    const after = await snapshot();
    const leaks = [...after].flatMap(([table, rows]) => rows.filter(isAcme).map((r) => `${table}: ${r.slice(0, 160)}`));
    expect(leaks).toEqual([]);
    for (const [table, rows] of after) expect([...rows].sort(), `rows of ${table}`).toEqual(untouched.get(table));
  });
});
