import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, TEST_SECRET_KEY, type TestServer } from '#test-helpers/server.js';
import { createMember } from '../services/members/members.js';
import { issuePassToMember } from '../services/passes/passes-issue.js';
import { authenticationTokenOf, SANDBOX_PASS_TYPE_ID } from '../services/wallet/pass-identity.js';

// Issue 28: GET /wallet/apple/v1/passes/{type}/{serial}, the latest version of a pass through
// routes/wallet-passes.ts's pkpassResponse, as GET /wallet/{code}.pkpass answers it.

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ sandbox: true });
});
afterAll(() => t?.close());

let n = 0;
async function storecard() {
  const scope = { organizationIds: ['org-acme'] };
  return t.db.sql.begin(async (tx) => {
    const { memberId } = await createMember(tx, scope, { brand_id: 'brand-acme', email: `latest${n++}@example.test` });
    return issuePassToMember(
      tx,
      scope,
      memberId,
      { brand_id: 'brand-acme', storecard_id: 'card-points' },
      'http://x.test',
    );
  });
}
const url = (passId: string) => `/wallet/apple/v1/passes/${SANDBOX_PASS_TYPE_ID}/${passId}`;
const applePass = (passId: string) => ({
  authorization: `ApplePass ${authenticationTokenOf(TEST_SECRET_KEY, passId)}`,
});

describe('the latest version of a pass', () => {
  it('answers the .pkpass with Last-Modified, 304 for If-Modified-Since, a newer one after an earn', async () => {
    const pass = await storecard();
    const first = await t.inject({ method: 'GET', url: url(pass.passId), headers: applePass(pass.passId) });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toContain('application/vnd.apple.pkpass');
    expect(first.rawPayload.subarray(0, 2).toString('latin1')).toBe('PK'); // a zip archive
    const lastModified = String(first.headers['last-modified']);
    expect(Date.parse(lastModified)).not.toBeNaN();

    const unchanged = await t.inject({
      method: 'GET',
      url: url(pass.passId),
      headers: { ...applePass(pass.passId), 'if-modified-since': lastModified },
    });
    expect(unchanged.statusCode).toBe(304);

    await new Promise((r) => setTimeout(r, 1100)); // Last-Modified has whole seconds
    const earned = await t.inject({
      method: 'POST',
      url: '/passes/scan/storecard',
      headers: await t.auth('acme-admin'),
      payload: { pass_code: pass.passCode, type: 'earn', points: 10, transaction_reference: 'latest-1' },
    });
    expect(earned.statusCode).toBe(201);
    const newer = await t.inject({
      method: 'GET',
      url: url(pass.passId),
      headers: { ...applePass(pass.passId), 'if-modified-since': lastModified },
    });
    expect(newer.statusCode).toBe(200);
    expect(Date.parse(String(newer.headers['last-modified']))).toBeGreaterThan(Date.parse(lastModified));
  });

  it('never answers 304 to a phone holding a version of the same second as a later change', async () => {
    const pass = await storecard();
    const earn = async (reference: string) =>
      t.inject({
        method: 'POST',
        url: '/passes/scan/storecard',
        headers: await t.auth('acme-admin'),
        payload: { pass_code: pass.passCode, type: 'earn', points: 10, transaction_reference: reference },
      });
    // A version late in its second: the next change would fall in the same second of Last-Modified.
    await t.db
      .sql`UPDATE passes SET updated_at = date_trunc('second', now()) + interval '900 ms' WHERE id = ${pass.passId}`;
    const held = await t.inject({ method: 'GET', url: url(pass.passId), headers: applePass(pass.passId) });
    expect((await earn('same-second-1')).statusCode).toBe(201);
    const asked = await t.inject({
      method: 'GET',
      url: url(pass.passId),
      headers: { ...applePass(pass.passId), 'if-modified-since': String(held.headers['last-modified']) },
    });
    expect(asked.statusCode).toBe(200);
    expect(Date.parse(String(asked.headers['last-modified']))).toBeGreaterThan(
      Date.parse(String(held.headers['last-modified'])),
    );
  });

  it("answers 401 for a wrong token or another pass's token, as the other routes", async () => {
    const pass = await storecard();
    const other = await storecard();
    for (const headers of [{ authorization: 'ApplePass wrong' }, applePass(other.passId), {}]) {
      const res = await t.inject({ method: 'GET', url: url(pass.passId), headers });
      expect(res.statusCode).toBe(401);
    }
  });
});
