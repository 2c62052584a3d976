import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type Json, type TestServer } from '#test-helpers/server.js';
import { DEMO_FIXTURES } from '#test-helpers/test-fixtures.js';
import { loadFixtureFile } from '../services/platform/fixtures.js';

// Issue 27, finding 9: a sandbox reset loads the fixture file's records again, so a reset
// organization of the demo fixtures is back to the demo tags, members, passes and voucher job.

const OPERATOR = 'operator-credential-of-this-test-0123456789';
const NOOR = 'de3b0000-0000-4000-8000-000000000001';
const LIAM = 'de3b0000-0000-4000-8000-000000000002';
const JOB = 'de3d0000-0000-4000-8000-000000000001';

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true, sandboxOperatorToken: OPERATOR });
  // As `npm start` with the default fixtures: the whole demo file, which a reset loads again.
  t.config.fixtures = DEMO_FIXTURES;
  await loadFixtureFile(t.db.sql, DEMO_FIXTURES);
});
afterAll(() => t?.close());

const call = async (token: string, method: string, url: string, payload?: unknown) => {
  const res = await t.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload !== undefined && { payload: payload as object }),
  });
  return { status: res.statusCode, body: (res.payload ? JSON.parse(res.payload) : null) as Json };
};

/** What a new user sees of brand-acme: tags, members with their subscription and passes, the voucher job. */
async function demoView(token: string) {
  const tags = await call(token, 'GET', '/tags');
  const members = await Promise.all([NOOR, LIAM].map((id) => call(token, 'GET', `/members/${id}?brand_id=brand-acme`)));
  const job = await call(token, 'GET', `/tags/demo-regulars/vouchers/${JOB}?brand_id=brand-acme`);
  return {
    tags: tags.body.data?.map((tag: Json) => tag.external_reference),
    members: members.map((m) => ({
      status: m.status,
      unsubscribed: m.body.unsubscribed,
      storecards: m.body.storecards?.length,
      coupons: m.body.coupons?.length,
    })),
    job: { status: job.status, state: job.body.status, issued: job.body.issued },
  };
}

const DEMO_VIEW = {
  tags: ['demo-regulars', 'demo-newsletter', 'demo-gift-box'],
  members: [
    { status: 200, unsubscribed: false, storecards: 1, coupons: 1 },
    { status: 200, unsubscribed: false, storecards: 1, coupons: 1 },
  ],
  job: { status: 200, state: 'done', issued: 3 },
};

/** Changes a user makes to the demo data: a tag more, a member opted out, a member deleted. */
async function play(token: string) {
  const tag = await call(token, 'POST', '/tags', { brand_id: 'brand-acme', external_reference: 'mine', tag: 'Mine' });
  expect(tag.status).toBe(201);
  expect(
    (
      await call(token, 'PATCH', '/members/unsubscribe', {
        brand_id: 'brand-acme',
        email: 'noor.janssen@demo.example.com',
      })
    ).status,
  ).toBe(200);
  expect((await call(token, 'DELETE', `/members/${LIAM}?brand_id=brand-acme`)).status).toBeLessThan(300);
  expect(await demoView(token)).not.toEqual(DEMO_VIEW);
}

describe('a sandbox reset with the demo fixtures', () => {
  it('brings back the demo data of the reset organization', async () => {
    let token = await t.newToken('acme-admin');
    expect(await demoView(token)).toEqual(DEMO_VIEW);
    await play(token);
    expect((await call(token, 'POST', '/sandbox/reset')).status).toBe(200);
    token = await t.newToken('acme-admin');
    expect(await demoView(token)).toEqual(DEMO_VIEW);
  });

  it("and the operator's whole-server reset too", async () => {
    let token = await t.newToken('acme-admin');
    await play(token);
    expect((await call(OPERATOR, 'POST', '/sandbox/reset', { scope: 'server' })).status).toBe(200);
    token = await t.newToken('acme-admin');
    expect(await demoView(token)).toEqual(DEMO_VIEW);
  });
});
